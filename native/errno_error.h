// errno -> JS Error with .code (e.g. "EAFNOSUPPORT"), .errno and .syscall, like Node's own errors.
#pragma once
#include <napi.h>
#include <cerrno>
#include <cstring>
#include <string>

namespace smcrun {

inline std::string ErrnoName(int err) {
  const char* name = strerrorname_np(err);  // glibc >= 2.32
  return name ? name : "E" + std::to_string(err);
}

inline Napi::Error ErrnoError(Napi::Env env, int err, const char* syscall) {
  std::string msg = std::string(syscall) + " failed: " + ErrnoName(err) + " (" + std::strerror(err) + ")";
  Napi::Error e = Napi::Error::New(env, msg);
  e.Set("code", Napi::String::New(env, ErrnoName(err)));
  e.Set("errno", Napi::Number::New(env, err));
  e.Set("syscall", Napi::String::New(env, syscall));
  return e;
}

// Owns one file descriptor until released: every early return closes it.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { int fd = fd_; fd_ = -1; return fd; }
  void reset(int fd = -1);
 private:
  int fd_;
};

Napi::Object InitSocket(Napi::Env env, Napi::Object exports);
Napi::Object InitNetlink(Napi::Env env, Napi::Object exports);
Napi::Object InitNetns(Napi::Env env, Napi::Object exports);

}  // namespace smcrun
