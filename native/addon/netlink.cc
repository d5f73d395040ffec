// Netlink transport only: open a socket, send a request, receive one datagram, on the calling thread or
// off the main thread. The bytes go in and come back whole: message framing, where a reply ends, and
// parsing (sock_diag, generic netlink) live in TypeScript, where they are tested on fixtures.
#include <linux/netlink.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

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

// netlinkExchangeAsync(fd[, request]) -> Promise<Buffer>: sends the request when one is given, then
// receives one datagram, on a libuv thread-pool thread, so the event loop never waits for the kernel (a
// large dump's next batch, or the socket's 5 s receive timeout). The bytes come back as they arrived:
// where a reply ends, and which of its messages matter, TypeScript reads (src/netlink/socket.ts). The fd
// must stay open until the promise settles; one exchange per fd at a time.
class ExchangeWorker : public Napi::AsyncWorker {
 public:
  ExchangeWorker(Napi::Env env, int fd, std::vector<uint8_t> request, bool low_priority)
      : Napi::AsyncWorker(env, "smc-run:netlink"), deferred_(Napi::Promise::Deferred::New(env)),
        fd_(fd), request_(std::move(request)), low_priority_(low_priority) {}
  Napi::Promise Promise() { return deferred_.Promise(); }

  // The exchange runs in a thread of its own at the lowest priority (nice 19): a dump of thousands of
  // sockets keeps a CPU busy in the kernel, and on a loaded machine that CPU time should not be taken
  // from the event loop. A fresh thread, so no pool thread's priority changes (unprivileged code could
  // not lower it back). std::thread, not pthread_create: see netns.cc (glibc baseline); it reports a
  // failed start by throwing, which becomes an error here.
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
    if (!request_.empty()) {
      err_ = SendToKernel(fd_, request_.data(), request_.size());
      if (err_ != 0) { syscall_ = "sendto"; return; }
    }
    err_ = RecvDatagram(fd_, &datagram_);
    if (err_ != 0) syscall_ = "recv";
  }

  void OnOK() override {
    Napi::Env env = Env();
    if (err_ != 0) {
      deferred_.Reject(ErrnoError(env, err_, syscall_).Value());
      return;
    }
    deferred_.Resolve(Napi::Buffer<uint8_t>::Copy(env, datagram_.data(), datagram_.size()));
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  int fd_;
  std::vector<uint8_t> request_;
  bool low_priority_;
  std::vector<uint8_t> datagram_;
  int err_ = 0;
  const char* syscall_ = "";
};

Napi::Value NetlinkExchangeAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  bool has_request = info.Length() >= 2 && !info[1].IsUndefined() && !info[1].IsNull();
  if (info.Length() < 1 || !info[0].IsNumber() || (has_request && !info[1].IsTypedArray())) {
    Napi::TypeError::New(env, "netlinkExchangeAsync(fd[, request])").ThrowAsJavaScriptException();
    return env.Null();
  }
  std::vector<uint8_t> request;
  if (has_request) {
    Napi::Uint8Array req = info[1].As<Napi::Uint8Array>();
    request.assign(req.Data(), req.Data() + req.ByteLength());
  }
  auto* worker = new ExchangeWorker(env, info[0].As<Napi::Number>().Int32Value(), std::move(request), LowPriorityExchanges());
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
  exports.Set("netlinkExchangeAsync", Napi::Function::New(env, NetlinkExchangeAsync, "netlinkExchangeAsync"));
  return exports;
}

}  // namespace smcrun
