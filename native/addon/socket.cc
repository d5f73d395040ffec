// Socket syscalls: create an SMC (or, in test mode, plain TCP) stream socket, read/write integer
// socket options, and fstat an fd for its inode (the key that links a socket to its sock_diag row).
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errno_error.h"

namespace smcrun {

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
}

namespace {

// createSocket(domain, protocol): a non-blocking, close-on-exec SOCK_STREAM socket.
// AF_SMC with SMCPROTO_SMC(0)/SMCPROTO_SMC6(1), AF_INET/6 with IPPROTO_SMC(256), or plain TCP.
Napi::Value CreateSocket(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber()) {
    Napi::TypeError::New(env, "createSocket(domain, protocol)").ThrowAsJavaScriptException();
    return env.Null();
  }
  int domain = info[0].As<Napi::Number>().Int32Value();
  int protocol = info[1].As<Napi::Number>().Int32Value();
  int fd = socket(domain, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
  if (fd < 0) {
    ErrnoError(env, errno, "socket").ThrowAsJavaScriptException();
    return env.Null();
  }
  return Napi::Number::New(env, fd);
}

Napi::Value CloseFd(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "closeFd(fd)").ThrowAsJavaScriptException();
    return env.Null();
  }
  if (close(info[0].As<Napi::Number>().Int32Value()) < 0 && errno != EINTR) {
    ErrnoError(env, errno, "close").ThrowAsJavaScriptException();
  }
  return env.Undefined();
}

bool ReadFdLevelName(const Napi::CallbackInfo& info, int* fd, int* level, int* name, const char* usage) {
  if (info.Length() < 3 || !info[0].IsNumber() || !info[1].IsNumber() || !info[2].IsNumber()) {
    Napi::TypeError::New(info.Env(), usage).ThrowAsJavaScriptException();
    return false;
  }
  *fd = info[0].As<Napi::Number>().Int32Value();
  *level = info[1].As<Napi::Number>().Int32Value();
  *name = info[2].As<Napi::Number>().Int32Value();
  return true;
}

Napi::Value GetSockOptInt(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd, level, name;
  if (!ReadFdLevelName(info, &fd, &level, &name, "getSockOptInt(fd, level, name)")) return env.Null();
  int value = 0;
  socklen_t len = sizeof(value);
  if (getsockopt(fd, level, name, &value, &len) < 0) {
    ErrnoError(env, errno, "getsockopt").ThrowAsJavaScriptException();
    return env.Null();
  }
  return Napi::Number::New(env, value);
}

Napi::Value SetSockOptInt(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd, level, name;
  if (!ReadFdLevelName(info, &fd, &level, &name, "setSockOptInt(fd, level, name, value)")) return env.Null();
  if (info.Length() < 4 || !info[3].IsNumber()) {
    Napi::TypeError::New(env, "setSockOptInt(fd, level, name, value)").ThrowAsJavaScriptException();
    return env.Null();
  }
  int value = info[3].As<Napi::Number>().Int32Value();
  if (setsockopt(fd, level, name, &value, sizeof(value)) < 0) {
    ErrnoError(env, errno, "setsockopt").ThrowAsJavaScriptException();
  }
  return env.Undefined();
}

// replaceWithTcp(fd, domain) / replaceSocket(fd, domain, protocol): puts a fresh stream socket (plain TCP,
// or e.g. AF_SMC; non-blocking, close-on-exec) under the fd number `fd`, closing the socket that was there,
// atomically (dup3: the number is never free, so no other thread can be handed it in between). Used on a
// libuv handle whose socket must change kind (a failed SMC handshake retried over TCP, a policy decision
// at connect); see src/hook/tcp-retry.ts for why this is safe with libuv's epoll bookkeeping. When it
// throws, the old socket is untouched.
Napi::Value ReplaceSocket(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber() || (info.Length() > 2 && !info[2].IsNumber())) {
    Napi::TypeError::New(env, "replaceSocket(fd, domain, protocol)").ThrowAsJavaScriptException();
    return env.Null();
  }
  int fd = info[0].As<Napi::Number>().Int32Value();
  int domain = info[1].As<Napi::Number>().Int32Value();
  int protocol = info.Length() > 2 ? info[2].As<Napi::Number>().Int32Value() : 0;
  if (fd < 0) {
    ErrnoError(env, EBADF, "dup3").ThrowAsJavaScriptException();
    return env.Null();
  }
  int fresh = socket(domain, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
  if (fresh < 0) {
    ErrnoError(env, errno, "socket").ThrowAsJavaScriptException();
    return env.Null();
  }
  int rc;
  do {
    rc = dup3(fresh, fd, O_CLOEXEC);
  } while (rc < 0 && errno == EINTR);
  int err = errno;
  close(fresh);
  if (rc < 0) ErrnoError(env, err, "dup3").ThrowAsJavaScriptException();
  return env.Undefined();
}

// getSockOptBytes(fd, level, name, maxLength) -> Buffer: the option's bytes as the kernel returns them
// (struct options such as TCP_INFO, which the TCP retry reads for tcpi_state and tcpi_segs_in).
Napi::Value GetSockOptBytes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd, level, name;
  if (!ReadFdLevelName(info, &fd, &level, &name, "getSockOptBytes(fd, level, name, maxLength)")) return env.Null();
  if (info.Length() < 4 || !info[3].IsNumber()) {
    Napi::TypeError::New(env, "getSockOptBytes(fd, level, name, maxLength)").ThrowAsJavaScriptException();
    return env.Null();
  }
  int max = info[3].As<Napi::Number>().Int32Value();
  if (max < 1 || max > 4096) {
    Napi::RangeError::New(env, "getSockOptBytes: maxLength 1..4096").ThrowAsJavaScriptException();
    return env.Null();
  }
  unsigned char buf[4096];
  socklen_t len = static_cast<socklen_t>(max);
  if (getsockopt(fd, level, name, buf, &len) < 0) {
    ErrnoError(env, errno, "getsockopt").ThrowAsJavaScriptException();
    return env.Null();
  }
  return Napi::Buffer<unsigned char>::Copy(env, buf, len);
}

// fstatInode(fd) -> inode number as a BigInt (sock_diag reports it as u64).
Napi::Value FstatInode(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "fstatInode(fd)").ThrowAsJavaScriptException();
    return env.Null();
  }
  // statx (glibc 2.28), not fstat: glibc >= 2.33 headers bind fstat to fstat64@GLIBC_2.33, and the prebuilt
  // addon must load on glibc 2.28 (RHEL 8)
  struct statx st;
  if (statx(info[0].As<Napi::Number>().Int32Value(), "", AT_EMPTY_PATH, STATX_INO, &st) < 0) {
    ErrnoError(env, errno, "fstat").ThrowAsJavaScriptException();
    return env.Null();
  }
  return Napi::BigInt::New(env, static_cast<uint64_t>(st.stx_ino));
}

}  // namespace

Napi::Object InitSocket(Napi::Env env, Napi::Object exports) {
  exports.Set("createSocket", Napi::Function::New(env, CreateSocket, "createSocket"));
  exports.Set("closeFd", Napi::Function::New(env, CloseFd, "closeFd"));
  exports.Set("getSockOptInt", Napi::Function::New(env, GetSockOptInt, "getSockOptInt"));
  exports.Set("setSockOptInt", Napi::Function::New(env, SetSockOptInt, "setSockOptInt"));
  exports.Set("getSockOptBytes", Napi::Function::New(env, GetSockOptBytes, "getSockOptBytes"));
  exports.Set("replaceWithTcp", Napi::Function::New(env, ReplaceSocket, "replaceWithTcp"));
  exports.Set("replaceSocket", Napi::Function::New(env, ReplaceSocket, "replaceSocket"));
  exports.Set("fstatInode", Napi::Function::New(env, FstatInode, "fstatInode"));
  return exports;
}

}  // namespace smcrun
