// The one primitive for acting in another network namespace: a short-lived helper thread joins the
// namespace (setns affects only the calling thread), opens a file or a netlink socket there, and
// hands the fd back. The fd keeps its namespace for life; Node's main thread never switches.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <system_error>
#include <thread>

#include "errno_error.h"

namespace smcrun {

int OpenNetlinkSocket(int protocol, int* err);

namespace {

struct Result {
  int fd = -1;
  int err = 0;
  const char* syscall = "";
};

// kind: "file" (path, flags) or "netlink" (protocol). A helper thread that cannot start (EAGAIN: thread
// or memory limits) is an error like any other: std::thread reports it by throwing std::system_error,
// which uncaught would abort the whole Node process. (Not pthread_create directly: since glibc 2.34 that
// symbol is versioned GLIBC_2.34, above the prebuilt addons' 2.28 baseline.)
Result OpenInNamespace(const std::string& nsPath, const std::string& kind, const std::string& path, int arg) {
  Result r;
  try {
    // test hook (test/integration/shim.test.ts): the failure path without exhausting the machine's thread
    // limit; read once, on the first call (the JS thread: the caller joins the worker)
    static const bool fail_thread = std::getenv("SMC_RUN_TEST_THREAD_FAIL") != nullptr;
    if (fail_thread) throw std::system_error(EAGAIN, std::generic_category());
    std::thread worker([&] {
      UniqueFd ns(open(nsPath.c_str(), O_RDONLY | O_CLOEXEC));
      if (!ns.valid()) { r.err = errno; r.syscall = "open"; return; }
      if (setns(ns.get(), CLONE_NEWNET) < 0) { r.err = errno; r.syscall = "setns"; return; }
      if (kind == "netlink") {
        r.fd = OpenNetlinkSocket(arg, &r.err);
        r.syscall = "socket";
      } else {
        r.fd = open(path.c_str(), arg | O_CLOEXEC);
        if (r.fd < 0) r.err = errno;
        r.syscall = "open";
      }
    });
    worker.join();
  } catch (const std::system_error& e) {
    if (r.fd >= 0) close(r.fd);
    r = Result{};
    r.err = e.code().value() != 0 ? e.code().value() : EAGAIN;
    r.syscall = "pthread_create";
  }
  return r;
}

// openInNetns(nsPath, "file", path, flags) | openInNetns(nsPath, "netlink", "", protocol) -> fd
Napi::Value OpenInNetns(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsString() || !info[1].IsString() || !info[2].IsString() ||
      !info[3].IsNumber()) {
    Napi::TypeError::New(env, "openInNetns(nsPath, kind, path, flagsOrProtocol)").ThrowAsJavaScriptException();
    return env.Null();
  }
  std::string kind = info[1].As<Napi::String>();
  if (kind != "file" && kind != "netlink") {
    Napi::TypeError::New(env, "openInNetns: kind must be 'file' or 'netlink'").ThrowAsJavaScriptException();
    return env.Null();
  }
  Result r = OpenInNamespace(info[0].As<Napi::String>(), kind, info[2].As<Napi::String>(),
                             info[3].As<Napi::Number>().Int32Value());
  if (r.fd < 0) {
    Napi::Error e = ErrnoError(env, r.err, r.syscall);
    e.ThrowAsJavaScriptException();
    return env.Null();
  }
  return Napi::Number::New(env, r.fd);
}

}  // namespace

Napi::Object InitNetns(Napi::Env env, Napi::Object exports) {
  exports.Set("openInNetns", Napi::Function::New(env, OpenInNetns, "openInNetns"));
  return exports;
}

}  // namespace smcrun
