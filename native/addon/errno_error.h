// errno -> JS Error with .code (e.g. "EAFNOSUPPORT"), .errno and .syscall, like Node's own errors.
#pragma once
#include <napi.h>
#include <cerrno>
#include <cstring>
#include <string>

namespace smcrun {

// errno -> its macro name. Our own table, not strerrorname_np (glibc >= 2.32): the prebuilt addon must load
// on glibc 2.28 (RHEL 8). The names of Linux's errno.h in number order; an alias (EWOULDBLOCK, EDEADLOCK,
// ENOTSUP) names its primary, as strerrorname_np does.
#define SMCRUN_ERRNO_NAMES(X) \
    X(EPERM) X(ENOENT) X(ESRCH) X(EINTR) X(EIO) X(ENXIO) X(E2BIG) X(ENOEXEC) X(EBADF) X(ECHILD) X(EAGAIN) \
    X(ENOMEM) X(EACCES) X(EFAULT) X(ENOTBLK) X(EBUSY) X(EEXIST) X(EXDEV) X(ENODEV) X(ENOTDIR) X(EISDIR) \
    X(EINVAL) X(ENFILE) X(EMFILE) X(ENOTTY) X(ETXTBSY) X(EFBIG) X(ENOSPC) X(ESPIPE) X(EROFS) X(EMLINK) \
    X(EPIPE) X(EDOM) X(ERANGE) X(EDEADLK) X(ENAMETOOLONG) X(ENOLCK) X(ENOSYS) X(ENOTEMPTY) X(ELOOP) X(ENOMSG) \
    X(EIDRM) X(ECHRNG) X(EL2NSYNC) X(EL3HLT) X(EL3RST) X(ELNRNG) X(EUNATCH) X(ENOCSI) X(EL2HLT) X(EBADE) \
    X(EBADR) X(EXFULL) X(ENOANO) X(EBADRQC) X(EBADSLT) X(EBFONT) X(ENOSTR) X(ENODATA) X(ETIME) X(ENOSR) \
    X(ENONET) X(ENOPKG) X(EREMOTE) X(ENOLINK) X(EADV) X(ESRMNT) X(ECOMM) X(EPROTO) X(EMULTIHOP) X(EDOTDOT) \
    X(EBADMSG) X(EOVERFLOW) X(ENOTUNIQ) X(EBADFD) X(EREMCHG) X(ELIBACC) X(ELIBBAD) X(ELIBSCN) X(ELIBMAX) \
    X(ELIBEXEC) X(EILSEQ) X(ERESTART) X(ESTRPIPE) X(EUSERS) X(ENOTSOCK) X(EDESTADDRREQ) X(EMSGSIZE) \
    X(EPROTOTYPE) X(ENOPROTOOPT) X(EPROTONOSUPPORT) X(ESOCKTNOSUPPORT) X(EOPNOTSUPP) X(EPFNOSUPPORT) \
    X(EAFNOSUPPORT) X(EADDRINUSE) X(EADDRNOTAVAIL) X(ENETDOWN) X(ENETUNREACH) X(ENETRESET) X(ECONNABORTED) \
    X(ECONNRESET) X(ENOBUFS) X(EISCONN) X(ENOTCONN) X(ESHUTDOWN) X(ETOOMANYREFS) X(ETIMEDOUT) X(ECONNREFUSED) \
    X(EHOSTDOWN) X(EHOSTUNREACH) X(EALREADY) X(EINPROGRESS) X(ESTALE) X(EUCLEAN) X(ENOTNAM) X(ENAVAIL) \
    X(EISNAM) X(EREMOTEIO) X(EDQUOT) X(ENOMEDIUM) X(EMEDIUMTYPE) X(ECANCELED) X(ENOKEY) X(EKEYEXPIRED) \
    X(EKEYREVOKED) X(EKEYREJECTED) X(EOWNERDEAD) X(ENOTRECOVERABLE) X(ERFKILL) X(EHWPOISON)

inline std::string ErrnoName(int err) {
  switch (err) {
#define SMCRUN_ERRNO_CASE(name) case name: return #name;
    SMCRUN_ERRNO_NAMES(SMCRUN_ERRNO_CASE)
#undef SMCRUN_ERRNO_CASE
    default: return "E" + std::to_string(err);
  }
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
Napi::Object InitFileLock(Napi::Env env, Napi::Object exports);

}  // namespace smcrun
