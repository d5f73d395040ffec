// Netlink transport only: open a socket, send one request, receive one datagram (or, off the main
// thread, every datagram of one dump). Message building and parsing (sock_diag, generic netlink) live in
// TypeScript, where they are tested on fixtures.
#include <linux/netlink.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <algorithm>
#include <system_error>
#include <thread>
#include <vector>

#include "errno_error.h"

namespace smcrun {

// Shared with netns.cc: a netlink socket with a receive timeout, so a lost reply can never hang Node.
int OpenNetlinkSocket(int protocol, int* err) {
  UniqueFd fd(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol));
  if (!fd.valid()) { *err = errno; return -1; }
  struct timeval tv = {5, 0};
  int rcvbuf = 1 << 20;
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
  struct sockaddr_nl local = {};
  local.nl_family = AF_NETLINK;
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&local), sizeof(local)) < 0) { *err = errno; return -1; }
  return fd.release();
}

namespace {

// bench hook (bench/observability-scale.cjs): SMC_RUN_TEST_NETLINK_NICE=0 runs the exchange on the pool
// thread itself. Read once, when the addon loads (InitNetlink, on the JS thread), and handed to each
// worker: getenv on a pool thread would race the JS thread's environment writes (process.env.X = ... is
// setenv). A function-local static, so worker_threads loading the addon again read nothing more.
bool LowPriorityExchanges() {
  static const bool low = [] {
    const char* nice = std::getenv("SMC_RUN_TEST_NETLINK_NICE");
    return !(nice != nullptr && std::strcmp(nice, "0") == 0);
  }();
  return low;
}

// One request to the kernel; 0 or errno.
int SendToKernel(int fd, const uint8_t* data, size_t len) {
  struct sockaddr_nl kernel = {};
  kernel.nl_family = AF_NETLINK;
  ssize_t n;
  do {
    n = sendto(fd, data, len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel));
  } while (n < 0 && errno == EINTR);
  return n < 0 ? errno : 0;
}

// One datagram into out, its size peeked first (MSG_TRUNC) so large dump batches are never cut; 0 or
// errno (the socket's receive timeout, EAGAIN, reported as ETIMEDOUT).
int RecvDatagram(int fd, std::vector<uint8_t>* out) {
  ssize_t size;
  do {
    size = recv(fd, nullptr, 0, MSG_PEEK | MSG_TRUNC);
  } while (size < 0 && errno == EINTR);
  if (size < 0) return errno == EAGAIN ? ETIMEDOUT : errno;
  out->resize(size > 0 ? size : 1);
  ssize_t n;
  do {
    n = recv(fd, out->data(), out->size(), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errno;
  out->resize(n);
  return 0;
}

Napi::Value NetlinkOpen(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "netlinkOpen(protocol)").ThrowAsJavaScriptException();
    return env.Null();
  }
  int err = 0;
  int fd = OpenNetlinkSocket(info[0].As<Napi::Number>().Int32Value(), &err);
  if (fd < 0) {
    ErrnoError(env, err, "socket").ThrowAsJavaScriptException();
    return env.Null();
  }
  return Napi::Number::New(env, fd);
}

// netlinkSend(fd, request: Uint8Array) — one complete netlink message (or batch) to the kernel.
Napi::Value NetlinkSend(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsTypedArray()) {
    Napi::TypeError::New(env, "netlinkSend(fd, request)").ThrowAsJavaScriptException();
    return env.Null();
  }
  Napi::Uint8Array req = info[1].As<Napi::Uint8Array>();
  int err = SendToKernel(info[0].As<Napi::Number>().Int32Value(), req.Data(), req.ByteLength());
  if (err != 0) ErrnoError(env, err, "sendto").ThrowAsJavaScriptException();
  return env.Undefined();
}

// netlinkRecv(fd) -> Buffer holding one datagram (possibly several netlink messages).
Napi::Value NetlinkRecv(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "netlinkRecv(fd)").ThrowAsJavaScriptException();
    return env.Null();
  }
  std::vector<uint8_t> buf;
  int err = RecvDatagram(info[0].As<Napi::Number>().Int32Value(), &buf);
  if (err != 0) {
    ErrnoError(env, err, "recv").ThrowAsJavaScriptException();
    return env.Null();
  }
  return Napi::Buffer<uint8_t>::Copy(env, buf.data(), buf.size());
}

// The netlink header as this host lays it out: the only thing the async receive loop reads, to know
// where its reply ends (NLMSG_DONE or NLMSG_ERROR for its sequence number).
bool EndsReply(const std::vector<uint8_t>& d, uint32_t seq) {
  size_t off = 0;
  while (off + sizeof(nlmsghdr) <= d.size()) {
    nlmsghdr h;
    std::memcpy(&h, d.data() + off, sizeof(h));
    if (h.nlmsg_len < sizeof(nlmsghdr) || off + h.nlmsg_len > d.size()) return true;  // malformed: TS reports it
    if (h.nlmsg_seq == seq && (h.nlmsg_type == NLMSG_DONE || h.nlmsg_type == NLMSG_ERROR)) return true;
    off += NLMSG_ALIGN(h.nlmsg_len);
  }
  return false;
}

// Which messages of a dump to hand back: those of msg_type whose u64 (host order) at key_offset of the
// payload is one of keys, and every message of another type (DONE, ERROR). Lets a lookup of a few sockets
// in a dump of thousands copy and parse only those few on the main thread.
struct KeyFilter {
  bool active = false;
  uint16_t msg_type = 0;
  size_t key_offset = 0;
  // sorted, for binary search. Filled by push_back, not a range insert: with GCC 12 a range insert of
  // 8-byte elements pulls in std::__throw_bad_array_new_length (GLIBCXX_3.4.29), above the prebuilt
  // addons' baseline (RHEL 8: 3.4.25)
  std::vector<uint64_t> keys;

  // The datagram with only the kept messages (each aligned, as the kernel lays them out).
  std::vector<uint8_t> Apply(const std::vector<uint8_t>& d) const {
    std::vector<uint8_t> out;
    size_t off = 0;
    while (off + sizeof(nlmsghdr) <= d.size()) {
      nlmsghdr h;
      std::memcpy(&h, d.data() + off, sizeof(h));
      if (h.nlmsg_len < sizeof(nlmsghdr) || off + h.nlmsg_len > d.size()) {  // malformed: TS reports it
        out.insert(out.end(), d.begin() + off, d.end());
        break;
      }
      size_t step = std::min<size_t>(NLMSG_ALIGN(h.nlmsg_len), d.size() - off);
      bool keep = h.nlmsg_type != msg_type;
      if (!keep && h.nlmsg_len >= NLMSG_HDRLEN + key_offset + sizeof(uint64_t)) {
        uint64_t key;
        std::memcpy(&key, d.data() + off + NLMSG_HDRLEN + key_offset, sizeof(key));
        keep = std::binary_search(keys.begin(), keys.end(), key);
      }
      if (keep) out.insert(out.end(), d.begin() + off, d.begin() + off + step);
      off += step;
    }
    return out;
  }
};

// netlinkRequestAsync(fd, request, seq[, filter]) -> Promise<Buffer[]>: sends one request and receives
// datagrams on a libuv thread-pool thread until the reply for seq ends, so the event loop never waits for
// the kernel (a dump of thousands of sockets, or the socket's 5 s receive timeout). With a filter
// ({ type, offset, keys: BigUint64Array }) only the matching messages come back. The fd must stay open
// until the promise settles; one request per fd at a time.
class RequestWorker : public Napi::AsyncWorker {
 public:
  RequestWorker(Napi::Env env, int fd, std::vector<uint8_t> request, uint32_t seq, KeyFilter filter, bool low_priority)
      : Napi::AsyncWorker(env, "smc-run:netlink"), deferred_(Napi::Promise::Deferred::New(env)),
        fd_(fd), request_(std::move(request)), seq_(seq), filter_(std::move(filter)), low_priority_(low_priority) {}
  Napi::Promise Promise() { return deferred_.Promise(); }

  // The exchange runs in a thread of its own at the lowest priority (nice 19): a dump of thousands of
  // sockets keeps a CPU busy in the kernel for tens of milliseconds under emulation, and on a loaded
  // machine that CPU time should not be taken from the event loop. A fresh thread, so no pool thread's
  // priority changes (unprivileged code could not lower it back). std::thread, not pthread_create: see
  // netns.cc (glibc baseline); it reports a failed start by throwing, which becomes an error here.
  void Execute() override {
    if (!low_priority_) {
      Exchange();
      return;
    }
    try {
      std::thread low([this] {
        setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 19);
        Exchange();
      });
      low.join();
    } catch (const std::system_error& e) {
      err_ = e.code().value() != 0 ? e.code().value() : EAGAIN;
      syscall_ = "pthread_create";
    }
  }

  void Exchange() {
    err_ = SendToKernel(fd_, request_.data(), request_.size());
    if (err_ != 0) { syscall_ = "sendto"; return; }
    for (size_t i = 0; i < kMaxDatagrams; i++) {
      std::vector<uint8_t> buf;
      err_ = RecvDatagram(fd_, &buf);
      if (err_ != 0) { syscall_ = "recv"; return; }
      bool done = EndsReply(buf, seq_);
      if (filter_.active) buf = filter_.Apply(buf);
      if (!buf.empty()) datagrams_.push_back(std::move(buf));
      if (done) return;
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    if (err_ != 0) {
      deferred_.Reject(ErrnoError(env, err_, syscall_).Value());
      return;
    }
    Napi::Array out = Napi::Array::New(env, datagrams_.size());
    for (size_t i = 0; i < datagrams_.size(); i++) {
      out.Set(i, Napi::Buffer<uint8_t>::Copy(env, datagrams_[i].data(), datagrams_[i].size()));
    }
    deferred_.Resolve(out);
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  static constexpr size_t kMaxDatagrams = 1000000;  // as the TS receive loop: past this, a bug, not data
  Napi::Promise::Deferred deferred_;
  int fd_;
  std::vector<uint8_t> request_;
  uint32_t seq_;
  KeyFilter filter_;
  bool low_priority_;
  std::vector<std::vector<uint8_t>> datagrams_;
  int err_ = 0;
  const char* syscall_ = "";
};

Napi::Value NetlinkRequestAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsNumber() || !info[1].IsTypedArray() || !info[2].IsNumber()) {
    Napi::TypeError::New(env, "netlinkRequestAsync(fd, request, seq)").ThrowAsJavaScriptException();
    return env.Null();
  }
  Napi::Uint8Array req = info[1].As<Napi::Uint8Array>();
  std::vector<uint8_t> copy(req.Data(), req.Data() + req.ByteLength());
  KeyFilter filter;
  if (info.Length() >= 4 && info[3].IsObject()) {
    Napi::Object f = info[3].As<Napi::Object>();
    Napi::Value keys = f.Get("keys");
    if (!f.Get("type").IsNumber() || !f.Get("offset").IsNumber() || !keys.IsTypedArray() ||
        keys.As<Napi::TypedArray>().TypedArrayType() != napi_biguint64_array) {
      Napi::TypeError::New(env, "netlinkRequestAsync filter: { type, offset, keys: BigUint64Array }").ThrowAsJavaScriptException();
      return env.Null();
    }
    Napi::TypedArrayOf<uint64_t> k = keys.As<Napi::TypedArrayOf<uint64_t>>();
    filter.active = true;
    filter.msg_type = static_cast<uint16_t>(f.Get("type").As<Napi::Number>().Uint32Value());
    filter.key_offset = f.Get("offset").As<Napi::Number>().Uint32Value();
    for (size_t i = 0; i < k.ElementLength(); i++) filter.keys.push_back(k[i]);
    std::sort(filter.keys.begin(), filter.keys.end());
  }
  auto* worker = new RequestWorker(env, info[0].As<Napi::Number>().Int32Value(), std::move(copy),
                                   info[2].As<Napi::Number>().Uint32Value(), std::move(filter), LowPriorityExchanges());
  Napi::Promise p = worker->Promise();
  worker->Queue();  // the worker deletes itself after OnOK/OnError
  return p;
}

}  // namespace

Napi::Object InitNetlink(Napi::Env env, Napi::Object exports) {
  LowPriorityExchanges();
  exports.Set("netlinkOpen", Napi::Function::New(env, NetlinkOpen, "netlinkOpen"));
  exports.Set("netlinkSend", Napi::Function::New(env, NetlinkSend, "netlinkSend"));
  exports.Set("netlinkRecv", Napi::Function::New(env, NetlinkRecv, "netlinkRecv"));
  exports.Set("netlinkRequestAsync", Napi::Function::New(env, NetlinkRequestAsync, "netlinkRequestAsync"));
  return exports;
}

}  // namespace smcrun
