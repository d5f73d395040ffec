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
#include <utility>

#include "errno_error.h"

namespace smcrun {

int OpenNetlinkSocket(int protocol, int* err);

namespace {

// test hook (test/integration/shim.test.ts): the failure path without exhausting the machine's thread
// limit; read once, when the addon loads on the JS thread (getenv on a pool thread would race the JS
// thread's environment writes)
bool g_fail_thread = false;

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
    if (g_fail_thread) throw std::system_error(EAGAIN, std::generic_category());
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

struct Request {
  std::string nsPath, kind, path;
  int arg = 0;
};

// The arguments of openInNetns/openInNetnsAsync; false (a TypeError thrown) when they are wrong.
bool ReadRequest(const Napi::CallbackInfo& info, const char* name, Request* req) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsString() || !info[1].IsString() || !info[2].IsString() ||
      !info[3].IsNumber()) {
    Napi::TypeError::New(env, std::string(name) + "(nsPath, kind, path, flagsOrProtocol)").ThrowAsJavaScriptException();
    return false;
  }
  req->kind = info[1].As<Napi::String>();
  if (req->kind != "file" && req->kind != "netlink") {
    Napi::TypeError::New(env, std::string(name) + ": kind must be 'file' or 'netlink'").ThrowAsJavaScriptException();
    return false;
  }
  req->nsPath = info[0].As<Napi::String>();
  req->path = info[2].As<Napi::String>();
  req->arg = info[3].As<Napi::Number>().Int32Value();
  return true;
}

// openInNetnsAsync(...) -> Promise<fd>: the same on a libuv pool thread, which waits for the helper thread
// instead of the event loop (the pool thread itself never changes namespace: other jobs run on it).
class OpenWorker : public Napi::AsyncWorker {
 public:
  OpenWorker(Napi::Env env, Request req)
      : Napi::AsyncWorker(env, "smc-run:netns"), deferred_(Napi::Promise::Deferred::New(env)), req_(std::move(req)) {}
  Napi::Promise Promise() { return deferred_.Promise(); }
  void Execute() override { r_ = OpenInNamespace(req_.nsPath, req_.kind, req_.path, req_.arg); }
  void OnOK() override {
    if (r_.fd < 0) deferred_.Reject(ErrnoError(Env(), r_.err, r_.syscall).Value());
    else deferred_.Resolve(Napi::Number::New(Env(), r_.fd));
  }
  void OnError(const Napi::Error& e) override {
    if (r_.fd >= 0) close(r_.fd);
    deferred_.Reject(e.Value());
  }

 private:
  Napi::Promise::Deferred deferred_;
  Request req_;
  Result r_;
};

Napi::Value OpenInNetnsAsync(const Napi::CallbackInfo& info) {
  Request req;
  if (!ReadRequest(info, "openInNetnsAsync", &req)) return info.Env().Null();
  auto* worker = new OpenWorker(info.Env(), std::move(req));
  Napi::Promise p = worker->Promise();
  worker->Queue();  // deletes itself after OnOK/OnError
  return p;
}

// openInNetns(nsPath, "file", path, flags) | openInNetns(nsPath, "netlink", "", protocol) -> fd
Napi::Value OpenInNetns(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Request req;
  if (!ReadRequest(info, "openInNetns", &req)) return env.Null();
  Result r = OpenInNamespace(req.nsPath, req.kind, req.path, req.arg);
  if (r.fd < 0) {
    Napi::Error e = ErrnoError(env, r.err, r.syscall);
    e.ThrowAsJavaScriptException();
    return env.Null();
  }
  return Napi::Number::New(env, r.fd);
}

}  // namespace

Napi::Object InitNetns(Napi::Env env, Napi::Object exports) {
  g_fail_thread = std::getenv("SMC_RUN_TEST_THREAD_FAIL") != nullptr;
  exports.Set("openInNetns", Napi::Function::New(env, OpenInNetns, "openInNetns"));
  exports.Set("openInNetnsAsync", Napi::Function::New(env, OpenInNetnsAsync, "openInNetnsAsync"));
  return exports;
}

}  // namespace smcrun
