// Netlink transport only: open a socket, send one request, receive one datagram. Message building
// and parsing (sock_diag, generic netlink) live in TypeScript, where they are tested on fixtures.
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

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
  int fd = info[0].As<Napi::Number>().Int32Value();
  Napi::Uint8Array req = info[1].As<Napi::Uint8Array>();
  struct sockaddr_nl kernel = {};
  kernel.nl_family = AF_NETLINK;
  ssize_t n;
  do {
    n = sendto(fd, req.Data(), req.ByteLength(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel));
  } while (n < 0 && errno == EINTR);
  if (n < 0) ErrnoError(env, errno, "sendto").ThrowAsJavaScriptException();
  return env.Undefined();
}

// netlinkRecv(fd) -> Buffer holding one datagram (possibly several netlink messages). The size is
// peeked first (MSG_TRUNC) so large dump batches are never cut.
Napi::Value NetlinkRecv(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "netlinkRecv(fd)").ThrowAsJavaScriptException();
    return env.Null();
  }
  int fd = info[0].As<Napi::Number>().Int32Value();
  ssize_t size;
  do {
    size = recv(fd, nullptr, 0, MSG_PEEK | MSG_TRUNC);
  } while (size < 0 && errno == EINTR);
  if (size < 0) {
    ErrnoError(env, errno == EAGAIN ? ETIMEDOUT : errno, "recv").ThrowAsJavaScriptException();
    return env.Null();
  }
  std::vector<uint8_t> buf(size > 0 ? size : 1);
  ssize_t n;
  do {
    n = recv(fd, buf.data(), buf.size(), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    ErrnoError(env, errno, "recv").ThrowAsJavaScriptException();
    return env.Null();
  }
  return Napi::Buffer<uint8_t>::Copy(env, buf.data(), n);
}

}  // namespace

Napi::Object InitNetlink(Napi::Env env, Napi::Object exports) {
  exports.Set("netlinkOpen", Napi::Function::New(env, NetlinkOpen, "netlinkOpen"));
  exports.Set("netlinkSend", Napi::Function::New(env, NetlinkSend, "netlinkSend"));
  exports.Set("netlinkRecv", Napi::Function::New(env, NetlinkRecv, "netlinkRecv"));
  return exports;
}

}  // namespace smcrun
