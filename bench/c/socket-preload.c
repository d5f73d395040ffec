// The zero-overhead baseline of bench/smcd/preload-compare.cjs: what smc-tools' smc_run does, reduced to
// its core. An LD_PRELOAD library whose socket() turns every AF_INET/AF_INET6 SOCK_STREAM socket into an
// AF_SMC one (SMCPROTO_SMC / SMCPROTO_SMC6), falling back to the call as given when the kernel refuses.
//   cc -O2 -shared -fPIC -o build/bench/socket-preload.so bench/c/socket-preload.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>

#ifndef AF_SMC
#define AF_SMC 43
#endif

typedef int (*socket_fn)(int, int, int);

int socket(int domain, int type, int protocol) {
  static socket_fn real;
  if (!real) real = (socket_fn)dlsym(RTLD_NEXT, "socket");
  if ((domain == AF_INET || domain == AF_INET6) && (type & 0xf) == SOCK_STREAM && (protocol == 0 || protocol == IPPROTO_TCP)) {
    int fd = real(AF_SMC, type, domain == AF_INET ? 0 : 1);
    if (fd >= 0) return fd;
  }
  return real(domain, type, protocol);
}
