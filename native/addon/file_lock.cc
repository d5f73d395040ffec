// flock(2) on an open file, for the OCI hook's lock over its records (src/oci/lock.ts): the kernel drops
// the lock when the holder dies, so a hook killed half-way never leaves it held.
#include <sys/file.h>
#include "errno_error.h"

namespace smcrun {
namespace {

// flock(fd, operation): LOCK_EX / LOCK_SH / LOCK_UN, | LOCK_NB; EWOULDBLOCK comes back as code EAGAIN
Napi::Value Flock(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber()) {
    Napi::TypeError::New(env, "flock(fd, operation)").ThrowAsJavaScriptException();
    return env.Null();
  }
  int r;
  do {
    r = flock(info[0].As<Napi::Number>().Int32Value(), info[1].As<Napi::Number>().Int32Value());
  } while (r < 0 && errno == EINTR);
  if (r < 0) ErrnoError(env, errno, "flock").ThrowAsJavaScriptException();
  return env.Undefined();
}

}  // namespace

Napi::Object InitFileLock(Napi::Env env, Napi::Object exports) {
  exports.Set("flock", Napi::Function::New(env, Flock, "flock"));
  return exports;
}

}  // namespace smcrun
