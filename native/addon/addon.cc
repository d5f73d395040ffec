// smc_run addon: syscalls only (socket, sockopts, netlink send/receive, setns, flock). Policy lives in TS.
#include "errno_error.h"

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  smcrun::InitSocket(env, exports);
  smcrun::InitNetlink(env, exports);
  smcrun::InitNetns(env, exports);
  smcrun::InitFileLock(env, exports);
  return exports;
}

NODE_API_MODULE(smc_run, Init)
