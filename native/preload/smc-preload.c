// smc-preload.so: the launcher's LD_PRELOAD library for programs that are not Node. Every TCP socket is
// SMC from socket() on, as smc-tools' smc_run makes it. With --include/--exclude the policy is decided in
// place, on the program's own socket: at connect() by destination and at listen() by local address, an
// excluded socket is switched to plain TCP by the kernel before any handshake (setsockopt of
// TCP_FASTOPEN_NO_COOKIE 0, which SMC answers with an in-place fallback, reason OPTUNSUPP; the value is
// TCP's default). Nothing is swapped under the fd, so its options, epoll registrations and dups stay
// the program's. The one new socket: the TCP retry of a blocking connect whose SMC handshake failed,
// made only when nothing else refers to the socket, with every option the program set replayed.
// Same SMC_RUN_* variables, policy, debug lines and notices as the Node shim (src/config.ts,
// src/policy/rules.ts, src/log.ts, src/hook/notice.ts, src/hook/tcp-retry.ts). Inert in Node processes.
// Calls reachable from socket()/connect()/accept() (async-signal-safe in POSIX) make syscalls only: no
// malloc, no stdio on a FILE, no strerror; configuration is read once, on first use.
// Build: native/preload/build.sh (glibc 2.28 symbols: dlsym pinned to its base version, no pthread_once).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// glibc 2.34 gave dlsym a new default version; the old one exists everywhere (libdl before 2.34)
#if defined(__x86_64__)
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
#elif defined(__aarch64__)
__asm__(".symver dlsym,dlsym@GLIBC_2.17");
#elif defined(__s390x__)
__asm__(".symver dlsym,dlsym@GLIBC_2.2");
#endif

#define API __attribute__((visibility("default")))
#ifndef AF_SMC
#define AF_SMC 43
#endif
#define IPPROTO_SMC_ 256
#define TCP_STATE_CLOSE 7
#define TCPI_SEGS_IN 140
#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif
#ifndef TCP_FASTOPEN_NO_COOKIE
#define TCP_FASTOPEN_NO_COOKIE 34
#endif
#define MAX_RULES 64

enum { PROTO_AUTO, PROTO_AF_SMC, PROTO_IPPROTO };
struct rule { int family; int prefix; int port; uint8_t addr[16]; };   // family 0 = any address, port -1 = any
struct spec { int domain, protocol; const char *kind; };

static struct {
  int disabled, debug, json, test_mode, proto, tcp_retry, test_fault, test_accept_fault;
  long sndbuf, rcvbuf;
  const char *session;
  struct rule include[MAX_RULES], exclude[MAX_RULES];
  int n_include, n_exclude;
} cfg;

static int (*real_connect)(int, const struct sockaddr *, socklen_t);
static int (*real_listen)(int, int);
static int (*real_socket)(int, int, int);
static int (*real_setsockopt)(int, int, int, const void *, socklen_t);
static int (*real_bind)(int, const struct sockaddr *, socklen_t);
static int (*real_accept)(int, struct sockaddr *, socklen_t *);
static int (*real_accept4)(int, struct sockaddr *, socklen_t *, int);
static int dead[2][2];          // [v6][spec]: the kernel refused this socket type (EAFNOSUPPORT, ...)
static int noticed_fallback, noticed_retry, noticed_in_place;

// ---- log lines: src/log.ts's format, one write(2) each, errno untouched
static void json_escape(char *out, size_t n, const char *s) {
  size_t o = 0;
  for (; *s && o + 3 < n; s++) {
    if (*s == '"' || *s == '\\') out[o++] = '\\';
    out[o++] = *s;
  }
  out[o] = 0;
}

static void log_line(const char *level, int num, const char *msg) {
  int saved = errno;
  char line[1024], esc[900];
  int len;
  if (cfg.json) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    json_escape(esc, sizeof esc, msg);
    len = snprintf(line, sizeof line, "{\"level\":%d,\"time\":%lld,\"pid\":%d,\"name\":\"smc-run\",\"msg\":\"%s\"}\n", num,
                   (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, (int)getpid(), esc);
  } else {
    len = snprintf(line, sizeof line, "%s: smc-run[%d]: %s\n", level, (int)getpid(), msg);
  }
  if (len > (int)sizeof line - 1) len = sizeof line - 1;
  if (write(2, line, (size_t)len) < 0) { /* stderr closed: nothing to do */ }
  errno = saved;
}
#define debugf(...) do { if (cfg.debug) { char m_[600]; snprintf(m_, sizeof m_, __VA_ARGS__); log_line("DEBUG", 20, m_); } } while (0)

static const char *errname(int e) {
  switch (e) {
    case ECONNRESET: return "ECONNRESET";
    case EPROTO: return "EPROTO";
    case EPIPE: return "EPIPE";
    case ECONNABORTED: return "ECONNABORTED";
    case ETIMEDOUT: return "ETIMEDOUT";
    case EAFNOSUPPORT: return "EAFNOSUPPORT";
    case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
    case ESOCKTNOSUPPORT: return "ESOCKTNOSUPPORT";
    case EPFNOSUPPORT: return "EPFNOSUPPORT";
    case ECONNREFUSED: return "ECONNREFUSED";
    case EHOSTUNREACH: return "EHOSTUNREACH";
    case ENETUNREACH: return "ENETUNREACH";
    case ENOTCONN: return "ENOTCONN";
    case EADDRINUSE: return "EADDRINUSE";
    case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
    case EINVAL: return "EINVAL";
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case EMFILE: return "EMFILE";
    case ENFILE: return "ENFILE";
    case ENOBUFS: return "ENOBUFS";
    case ENOMEM: return "ENOMEM";
    case ENOPROTOOPT: return "ENOPROTOOPT";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EBADF: return "EBADF";
    case ENOENT: return "ENOENT";
    default: return "an unlisted errno";
  }
}

// ---- notices: once per process tree, as src/hook/notice.ts does it (the same marker files, so a tree
// of Node and C programs prints each notice once). The markers live in a directory only this user can
// write: XDG_RUNTIME_DIR when it is the user's own with mode 0700, else $TMPDIR/smc-run-UID (made 0700);
// neither trusted: no marker, every process prints (never silenced by someone else's file).
// statx, not stat/lstat/fstat: those became symbols of their own in glibc 2.33, statx is in 2.28
static int statx_of(int dirfd, const char *path, int flags, struct statx *st) {
  return statx(dirfd, path, flags | AT_NO_AUTOMOUNT, STATX_TYPE | STATX_MODE | STATX_UID | STATX_INO, st);
}

static int private_dir(const char *dir, int exact) {
  struct statx st;
  if (statx_of(AT_FDCWD, dir, AT_SYMLINK_NOFOLLOW, &st) < 0 || !S_ISDIR(st.stx_mode) || st.stx_uid != geteuid()) return 0;
  return exact ? (st.stx_mode & 0777) == 0700 : !(st.stx_mode & 022);
}

static int marker_dir(char *buf, size_t n) {
  const char *run = getenv("XDG_RUNTIME_DIR");
  if (run && run[0] == '/' && private_dir(run, 1)) return snprintf(buf, n, "%s", run) < (int)n ? 0 : -1;
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = getenv("TMP");
  if (!dir || !*dir) dir = getenv("TEMP");
  if (!dir || !*dir) dir = "/tmp";
  size_t dl = strlen(dir);
  if (dl > 1 && dir[dl - 1] == '/') dl--;
  int len = snprintf(buf, n, "%.*s/smc-run-%u", (int)dl, dir, (unsigned)geteuid());
  if (len <= 0 || (size_t)len >= n) return -1;
  mkdir(buf, 0700);   // there already (ours or not: private_dir tells), or tmp not writable
  return private_dir(buf, 0) ? 0 : -1;
}

// The marker's path; keep in step with noticeMarkerPath() in src/hook/notice.ts.
static int notice_marker_path(char *buf, size_t n, const char *name) {
  char dir[400], clean[256];
  if (marker_dir(dir, sizeof dir) < 0) return -1;
  size_t c = 0;
  for (; *name && c + 1 < sizeof clean; name++)
    if ((*name >= 'A' && *name <= 'Z') || (*name >= 'a' && *name <= 'z') || (*name >= '0' && *name <= '9') || *name == '_' || *name == '-') clean[c++] = *name;
  clean[c] = 0;
  int len = snprintf(buf, n, "%s/smc-run-%u-%s.notice", dir, (unsigned)geteuid(), clean);
  return len > 0 && (size_t)len < n ? 0 : -1;
}

// /proc/PID/stat's start time (field 22), or -1 when the process is gone
static long long start_time(long pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t r = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (r <= 0) return -1;
  buf[r] = 0;
  char *p = strrchr(buf, ')');
  if (!p) return -1;
  p += 2;
  for (int field = 0; field < 19 && p; field++) p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
  return p ? strtoll(p, NULL, 10) : -1;
}

// sessionAlive() of notice.ts: "[word-]PID[-START]"
static int session_alive(const char *s) {
  const char *p = s;
  while (*p >= 'a' && *p <= 'z') p++;
  p = (*p == '-' && p != s) ? p + 1 : s;
  if (*p < '0' || *p > '9') return 1;
  char *end;
  long pid = strtol(p, &end, 10);
  if (pid == getpid()) return 1;
  long long started = start_time(pid);
  if (started < 0) return 0;
  if (*end != '-' || end[1] < '0' || end[1] > '9') return 1;
  long long want = strtoll(end + 1, NULL, 10);
  return want == 0 || want == started;
}

// getdents64 records, read with the syscall (opendir allocates)
struct dirent64_ { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; };
// each(name, arg) for every entry of the open directory dfd; stops early when each returns non-zero
static int each_entry(int dfd, int (*each)(int dfd, const char *name, void *arg), void *arg) {
  char buf[4096] __attribute__((aligned(8)));
  for (;;) {
    long n = syscall(SYS_getdents64, dfd, buf, sizeof buf);
    if (n <= 0) return n < 0 ? -1 : 0;
    for (long off = 0; off < n;) {
      struct dirent64_ *e = (void *)(buf + off);
      off += e->reclen;
      if (e->name[0] == '.') continue;
      int r = each(dfd, e->name, arg);
      if (r) return r;
    }
  }
}

// sweepStaleMarkers() of notice.ts: this user's markers whose session's process is gone
static int sweep_one(int dfd, const char *name, void *arg) {
  const char *prefix = arg;
  size_t pl = strlen(prefix), nl = strlen(name);
  if (strncmp(name, prefix, pl) || nl < pl + 7 || strcmp(name + nl - 7, ".notice")) return 0;
  char session[256];
  snprintf(session, sizeof session, "%.*s", (int)(nl - pl - 7), name + pl);
  if (!session_alive(session)) unlinkat(dfd, name, 0);
  return 0;
}

static void sweep_markers(const char *marker) {
  char dir[600], prefix[64];
  snprintf(dir, sizeof dir, "%s", marker);
  char *slash = strrchr(dir, '/');
  if (!slash) return;
  *slash = 0;
  snprintf(prefix, sizeof prefix, "smc-run-%u-", (unsigned)geteuid());
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return;
  each_entry(dfd, sweep_one, prefix);
  close(dfd);
}

// A marker another process of this user created: a regular file of ours, nothing else counts.
static int our_marker(const char *path) {
  struct statx st;
  return statx_of(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, &st) == 0 && S_ISREG(st.stx_mode) && st.stx_uid == geteuid();
}

static void notice_once(int *shown, const char *kind, const char *msg) {
  if (__atomic_exchange_n(shown, 1, __ATOMIC_ACQ_REL)) return;
  int saved = errno;
  if (cfg.session) {
    char name[300], path[800];
    snprintf(name, sizeof name, kind ? "%s-%s" : "%s", cfg.session, kind);
    if (notice_marker_path(path, sizeof path, name) == 0) {
      int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (fd < 0 && errno == EEXIST && our_marker(path)) { errno = saved; return; }
      if (fd >= 0) close(fd);
      // a marker that cannot be made (read-only tmp): better a repeated line than a silent fallback
      sweep_markers(path);
    }
  }
  log_line("WARN", 40, msg);
  errno = saved;
}

// ---- configuration (src/config.ts), read once
static int word_is(const char *v, const char *const *words) {
  if (!v) return 0;
  while (*v == ' ' || *v == '\t') v++;
  size_t n = strlen(v);
  while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\n')) n--;
  for (; *words; words++)
    if (strlen(*words) == n && !strncasecmp(v, *words, n)) return 1;
  return 0;
}
static const char *const TRUTHY[] = {"1", "true", "yes", "on", NULL};
static const char *const FALSY[] = {"0", "false", "no", "off", NULL};

// parseSize() of src/units.ts: 65536, 64k, 1M, 1MiB, 256KiB; -1 when malformed
static long parse_size(const char *s) {
  while (*s == ' ' || *s == '\t') s++;
  if (*s < '0' || *s > '9') return -1;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  while (*end == ' ' || *end == '\t') end++;
  unsigned long long mult = 1;
  if (*end == 'k' || *end == 'K') mult = 1024, end++;
  else if (*end == 'm' || *end == 'M') mult = 1024 * 1024, end++;
  else if (*end == 'g' || *end == 'G') mult = 1024 * 1024 * 1024, end++;
  if (*end == 'i' || *end == 'I') { end++; if (*end != 'b' && *end != 'B') return -1; }
  if (*end == 'b' || *end == 'B') end++;
  while (*end == ' ' || *end == '\t') end++;
  if (*end || v > (1ULL << 40) / mult) return -1;
  return (long)(v * mult);
}

// parseRule() of src/policy/rules.ts, the one grammar (test/fixtures/policy-vectors.json): "10.0.0.0/8",
// "10.1.2.3:5432", "[fd00::]/8:443", "::1", "*:6379", "[::ffff:10.0.0.0]/104" (the IPv4 rule 10.0.0.0/8).
// No zone (fe80::1%lo): rules name addresses, not interfaces. -1 when malformed.
static int parse_rule(const char *t, struct rule *r) {
  char addr[80];
  const char *port = NULL;
  size_t n = strlen(t);
  if (n >= sizeof addr || strchr(t, '%')) return -1;
  r->port = -1;
  int colons = 0;
  for (const char *c = t; *c; c++) colons += *c == ':';
  if (t[0] == '[') {
    const char *close_ = strchr(t, ']');
    if (!close_) return -1;
    const char *rest = close_ + 1;
    const char *colon = strchr(rest, ':');
    size_t pre = colon ? (size_t)(colon - rest) : strlen(rest);
    if (pre && rest[0] != '/') return -1;
    snprintf(addr, sizeof addr, "%.*s%.*s", (int)(close_ - t - 1), t + 1, (int)pre, rest);
    if (colon) port = colon + 1;
  } else if ((strchr(t, '.') && colons <= 1) || t[0] == '*') {
    // IPv4 or "*": at most one colon, the port's (more: IPv6 with a dotted-quad tail, no port unbracketed)
    const char *colon = strrchr(t, ':');
    snprintf(addr, sizeof addr, "%.*s", (int)(colon ? (size_t)(colon - t) : n), t);
    if (colon) port = colon + 1;
  } else {
    snprintf(addr, sizeof addr, "%s", t);
  }
  if (port) {
    if (!*port || strlen(port) > 5 || strspn(port, "0123456789") != strlen(port) || atoi(port) > 65535) return -1;
    r->port = atoi(port);
  }
  if (!strcmp(addr, "*") || !*addr) {
    if (r->port < 0) return -1;
    r->family = 0;
    r->prefix = 0;
    return 0;
  }
  char *slash = strchr(addr, '/');
  if (slash) *slash = 0;
  if (inet_pton(AF_INET, addr, r->addr) == 1) r->family = 4;
  else if (inet_pton(AF_INET6, addr, r->addr) == 1) r->family = 6;
  else return -1;
  int max = r->family == 4 ? 32 : 128;
  r->prefix = max;
  if (slash) {
    const char *p = slash + 1;
    if (!*p || strlen(p) > 3 || strspn(p, "0123456789") != strlen(p) || atoi(p) > max) return -1;
    r->prefix = atoi(p);
  }
  // a rule on IPv4-mapped IPv6 addresses is the IPv4 rule it spells
  if (r->family == 6 && r->prefix >= 96 && IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)(const void *)r->addr)) {
    memmove(r->addr, r->addr + 12, 4);
    memset(r->addr + 4, 0, 12);
    r->family = 4;
    r->prefix -= 96;
  }
  return 0;
}

// Comma- or white-space-separated rules into out (MAX_RULES at most); the count, or -1 with the bad
// token in bad.
static int parse_rule_list(const char *text, struct rule *out, char *bad, size_t bad_len) {
  int count = 0;
  const char *p = text;
  while (*p) {
    p += strspn(p, " \t\n\r,");
    size_t len = strcspn(p, " \t\n\r,");
    if (!len) break;
    char tok[96];
    snprintf(tok, sizeof tok, "%.*s", (int)len, p);
    if (len >= sizeof tok || count >= MAX_RULES || parse_rule(tok, &out[count]) < 0) {
      snprintf(bad, bad_len, "%.*s", (int)(len < 90 ? len : 90), p);
      return -1;
    }
    count++;
    p += len;
  }
  return count;
}

static int parse_rules(const char *name, struct rule *out, int *count) {
  const char *text = getenv(name);
  char bad[100];
  *count = 0;
  if (!text || !*text) return 0;
  int n = parse_rule_list(text, out, bad, sizeof bad);
  if (n < 0) {
    char m[300];
    snprintf(m, sizeof m, "smc-run: ignoring SMC: %s: \"%s\" is not an address or CIDR, or more than %d rules (examples: 10.0.0.0/8, 10.1.2.3:5432, [fd00::]/8:443)\n",
             name, bad, MAX_RULES);
    if (write(2, m, strlen(m)) < 0) { /* stderr closed */ }
    return -1;
  }
  *count = n;
  return 0;
}

static void config_error(const char *name, const char *value, const char *want) {
  char m[400];
  snprintf(m, sizeof m, "smc-run: ignoring SMC: %s=%s: %s\n", name, value, want);
  if (write(2, m, strlen(m)) < 0) { /* stderr closed */ }
  cfg.disabled = 1;
}

static void read_config(void) {
  memset(&cfg, 0, sizeof cfg);
  cfg.sndbuf = cfg.rcvbuf = -1;
  // TEST ONLY: a signal arrives while this thread initialises (its handler calls socket())
  const char *sig = getenv("SMC_RUN_TEST_INIT_SIGNAL");
  if (sig && *sig) raise(atoi(sig));
  real_connect = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
  real_listen = (int (*)(int, int))dlsym(RTLD_NEXT, "listen");
  real_socket = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
  real_setsockopt = (int (*)(int, int, int, const void *, socklen_t))dlsym(RTLD_NEXT, "setsockopt");
  real_bind = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "bind");
  real_accept = (int (*)(int, struct sockaddr *, socklen_t *))dlsym(RTLD_NEXT, "accept");
  real_accept4 = (int (*)(int, struct sockaddr *, socklen_t *, int))dlsym(RTLD_NEXT, "accept4");
  if (!real_connect || !real_listen || !real_socket || !real_setsockopt || !real_bind || !real_accept || !real_accept4) { cfg.disabled = 1; return; }
  // the Node shim acts in Node processes (every node binary exports N-API)
  if (word_is(getenv("SMC_RUN_DISABLE"), TRUTHY) || dlsym(RTLD_DEFAULT, "napi_module_register")) { cfg.disabled = 1; return; }
  cfg.debug = word_is(getenv("SMC_RUN_DEBUG"), TRUTHY);
  const char *v = getenv("SMC_RUN_LOG_FORMAT");
  cfg.json = word_is(v, (const char *const[]){"json", NULL});
  if (v && *v && !cfg.json && !word_is(v, (const char *const[]){"pretty", NULL})) return config_error("SMC_RUN_LOG_FORMAT", v, "expected one of pretty, json");
  v = getenv("SMC_RUN_SOCKET_FAMILY");
  cfg.test_mode = word_is(v, (const char *const[]){"inet", NULL});
  if (v && *v && !cfg.test_mode && !word_is(v, (const char *const[]){"smc", NULL})) return config_error("SMC_RUN_SOCKET_FAMILY", v, "expected one of smc, inet");
  v = getenv("SMC_RUN_PROTO");
  if (word_is(v, (const char *const[]){"af_smc", NULL})) cfg.proto = PROTO_AF_SMC;
  else if (word_is(v, (const char *const[]){"ipproto", NULL})) cfg.proto = PROTO_IPPROTO;
  else if (v && *v && !word_is(v, (const char *const[]){"auto", NULL})) return config_error("SMC_RUN_PROTO", v, "expected one of af_smc, ipproto, auto");
  const char *names[2] = {"SMC_RUN_SNDBUF", "SMC_RUN_RCVBUF"};
  long *sizes[2] = {&cfg.sndbuf, &cfg.rcvbuf};
  for (int i = 0; i < 2; i++) {
    v = getenv(names[i]);
    if (!v || !*v) continue;
    *sizes[i] = parse_size(v);
    if (*sizes[i] < 0 || *sizes[i] > 0x7fffffff) return config_error(names[i], v, "not a size (examples: 65536, 64k, 1M)");
  }
  cfg.tcp_retry = !word_is(getenv("SMC_RUN_TCP_RETRY"), FALSY);
  v = getenv("SMC_RUN_TEST_CONNECT_FAULT");   // TEST ONLY, test mode only: see src/config.ts
  if (cfg.test_mode && v && *v) {
    static const struct { const char *name; int code; } faults[] = {
      {"ECONNRESET", ECONNRESET}, {"EPROTO", EPROTO}, {"EPIPE", EPIPE}, {"ECONNABORTED", ECONNABORTED}, {"ETIMEDOUT", ETIMEDOUT}};
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++)
      if (!strcmp(v, faults[i].name)) cfg.test_fault = faults[i].code;
  }
  // TEST ONLY, test mode only: the first connection a listener accepts is closed and reported as this
  // error, as smc_accept() reports a connection whose SMC handshake failed after it was queued
  v = getenv("SMC_RUN_TEST_ACCEPT_FAULT");
  if (cfg.test_mode && v && !strcmp(v, "ECONNRESET")) cfg.test_accept_fault = ECONNRESET;
  cfg.session = getenv("SMC_RUN_SESSION");
  if (cfg.session && !*cfg.session) cfg.session = NULL;
  if (parse_rules("SMC_RUN_INCLUDE", cfg.include, &cfg.n_include) < 0 ||
      parse_rules("SMC_RUN_EXCLUDE", cfg.exclude, &cfg.n_exclude) < 0) { cfg.disabled = 1; return; }
}

// Once per process, thread-safe. Not pthread_once: glibc 2.34 moved it into libc under a new symbol
// version. A child forked while another thread initialised starts over.
// A socket call from a signal handler that interrupted the initialising thread would wait for itself:
// that call (and only that one) goes straight to the kernel instead (ensure_init answers 0).
static int init_state;   // 0 none, 1 running, 2 done
static pid_t init_pid, init_tid;
static int ensure_init(void) {
  if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2) return 1;
  int saved = errno;
  pid_t tid = (pid_t)syscall(SYS_gettid);
  for (;;) {
    int expected = 0;
    if (__atomic_compare_exchange_n(&init_state, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      init_pid = getpid();
      __atomic_store_n(&init_tid, tid, __ATOMIC_RELEASE);
      read_config();
      __atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
      break;
    }
    if (expected == 2) break;
    if (__atomic_load_n(&init_tid, __ATOMIC_ACQUIRE) == tid) { errno = saved; return 0; }
    if (init_pid && init_pid != getpid()) __atomic_compare_exchange_n(&init_state, &expected, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    else sched_yield();
  }
  errno = saved;
  return 1;
}

// ---- policy (wantsSmc() of src/policy/rules.ts); ::ffff:a.b.c.d is the IPv4 address a.b.c.d
// an address as the policy reads it; its text (for debug lines and notices) is made only when one is
// printed: inet_ntop formats with sprintf, a thousand instructions per connection otherwise
struct where { int family; uint8_t addr[16]; int port; int wildcard; int sa_family; uint8_t sa_addr[16]; char text[INET6_ADDRSTRLEN + 8]; };

static const char *wtext(struct where *w) {
  if (!w->text[0]) inet_ntop(w->sa_family, w->sa_addr, w->text, sizeof w->text);
  return w->text;
}

static int read_where(const struct sockaddr *sa, socklen_t len, struct where *w) {
  memset(w, 0, sizeof *w);
  if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
    const struct sockaddr_in *in = (const void *)sa;
    w->family = 4;
    memcpy(w->addr, &in->sin_addr, 4);
    w->port = ntohs(in->sin_port);
  } else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
    const struct sockaddr_in6 *in6 = (const void *)sa;
    w->port = ntohs(in6->sin6_port);
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) w->family = 4, memcpy(w->addr, in6->sin6_addr.s6_addr + 12, 4);
    else w->family = 6, memcpy(w->addr, &in6->sin6_addr, 16);
  } else {
    return -1;
  }
  static const uint8_t zero[16];
  w->wildcard = !memcmp(w->addr, zero, w->family == 4 ? 4 : 16);
  w->sa_family = sa->sa_family;
  memcpy(w->sa_addr, sa->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr
                                              : (const void *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, sa->sa_family == AF_INET ? 4 : 16);
  return 0;
}

static int rule_matches(const struct rule *r, const struct where *w) {
  if (r->port >= 0 && r->port != w->port) return 0;
  if (!r->family) return 1;
  if (w->wildcard) return r->prefix == 0;
  if (r->family != w->family) return 0;
  int full = r->prefix / 8, bits = r->prefix % 8;
  if (memcmp(r->addr, w->addr, (size_t)full)) return 0;
  return !bits || !((r->addr[full] ^ w->addr[full]) & (0xff << (8 - bits)));
}

static int decide(const struct rule *inc, int n_inc, const struct rule *exc, int n_exc, const struct where *w) {
  for (int i = 0; i < n_exc; i++)
    if (rule_matches(&exc[i], w)) return 0;
  if (!n_inc) return 1;
  for (int i = 0; i < n_inc; i++) {
    // a wildcard listener must be SMC for any included peer to reach it over SMC
    if (w->wildcard ? (inc[i].port < 0 || inc[i].port == w->port) : rule_matches(&inc[i], w)) return 1;
  }
  return 0;
}

static int wants_smc(const struct where *w) { return decide(cfg.include, cfg.n_include, cfg.exclude, cfg.n_exclude, w); }

// A connect() to 0.0.0.0 or :: reaches this host's loopback (the kernel connects there): the policy
// judges it as 127.0.0.1 or ::1, never as a wildcard listener (connectTarget() of src/policy/rules.ts).
static void as_destination(struct where *w) {
  if (!w->wildcard) return;
  w->wildcard = 0;
  if (w->family == 4) w->addr[0] = 127, w->addr[3] = 1;
  else w->addr[15] = 1;
}

// TEST ONLY: the policy vectors (test/fixtures/policy-vectors.json) run through this library's parser
// and matcher, exactly as connect() and listen() use them. 1 SMC, 0 TCP, -1 a bad include, -2 a bad
// exclude, -3 a bad address.
API int smc_run_test_decide(const char *include, const char *exclude, const char *address, int port, int listener) {
  static struct rule inc[MAX_RULES], exc[MAX_RULES];
  char bad[100];
  int n_inc = parse_rule_list(include, inc, bad, sizeof bad);
  if (n_inc < 0) return -1;
  int n_exc = parse_rule_list(exclude, exc, bad, sizeof bad);
  if (n_exc < 0) return -2;
  struct sockaddr_in6 in6;
  struct sockaddr_in in;
  struct where w;
  memset(&in, 0, sizeof in);
  memset(&in6, 0, sizeof in6);
  if (inet_pton(AF_INET, address, &in.sin_addr) == 1) {
    in.sin_family = AF_INET;
    in.sin_port = htons((uint16_t)port);
    read_where((const struct sockaddr *)&in, sizeof in, &w);
  } else if (inet_pton(AF_INET6, address, &in6.sin6_addr) == 1) {
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons((uint16_t)port);
    read_where((const struct sockaddr *)&in6, sizeof in6, &w);
  } else {
    return -3;
  }
  if (!listener) as_destination(&w);
  if (!n_inc && !n_exc) return 1;
  return decide(inc, n_inc, exc, n_exc, &w);
}

// ---- what the library knows of each fd
// A record per fd number, in chunks mapped on first use (socket() is async-signal-safe, malloc is not).
// A record outliving its socket (the fd closed and its number reused behind the library's back) only
// makes connect() ask the kernel to keep that socket TCP (a no-op on a TCP socket) or accept() drop
// per-connection errors a TCP listener never returns; the TCP retry checks SO_COOKIE before it acts.
struct retry_log;
struct known {
  uint8_t made;        // socket() made it SMC: its kind + 1, see made_kind()
  uint8_t decided;     // connect() or listen() ran on it: the policy is applied, nothing is recorded
  uint8_t listening;   // listen() succeeded: accept() drops per-connection errors
  uint8_t logged;      // log holds this socket's entries (set by the first entry after socket())
  struct retry_log *log;
};
#define KNOWN_CHUNK 1024
#define KNOWN_CHUNKS 1024   // fds below 1,048,576 are remembered; the few above take the kernel's word
static struct known *known_chunks[KNOWN_CHUNKS];

static void *map_zeroed(size_t n) {
  void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return m == MAP_FAILED ? NULL : m;
}

// fd's record; with create, its chunk is made first
static struct known *known_slot(int fd, int create) {
  if (fd < 0 || fd >= KNOWN_CHUNK * KNOWN_CHUNKS) return NULL;
  struct known **chunk = &known_chunks[fd / KNOWN_CHUNK];
  struct known *c = __atomic_load_n(chunk, __ATOMIC_ACQUIRE);
  if (!c && create) {
    struct known *m = map_zeroed(KNOWN_CHUNK * sizeof *c), *expected = NULL;
    if (!m) return NULL;
    c = m;
    if (!__atomic_compare_exchange_n(chunk, &expected, c, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      munmap(m, KNOWN_CHUNK * sizeof *c);
      c = expected;
    }
  }
  return c ? &c[fd % KNOWN_CHUNK] : NULL;
}

// fd's record when socket() made it SMC. No syscall.
static struct known *made_smc(int fd) {
  struct known *k = known_slot(fd, 0);
  return k && k->made ? k : NULL;
}

static const char *const KINDS[3] = {"af_smc", "ipproto_smc", "inet (test mode)"};

// The kernel's word on fd: 1 an SMC socket nobody connected or listened on yet (a socket of ours reached
// through another fd number, or inherited), 0 anything else. For fds without a record, with rules only.
static int unrecorded_smc(int fd) {
  int domain = 0, proto = 0;
  socklen_t l = sizeof domain;
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l) < 0) return 0;
  l = sizeof proto;
  if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l) < 0) return 0;
  if (domain != AF_SMC && proto != IPPROTO_SMC_) return 0;
  struct sockaddr_storage peer;
  l = sizeof peer;
  return getpeername(fd, (struct sockaddr *)&peer, &l) < 0 && errno == ENOTCONN;
}

// The debug lines' "on KIND": checked against the kernel (debug runs only), never claimed from the record.
static const char *made_kind(int fd, const struct known *k) {
  int domain = 0, proto = 0;
  socklen_t l = sizeof domain;
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l) < 0) return NULL;
  l = sizeof proto;
  if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l) < 0) return NULL;
  if (k->made == 3 ? domain == AF_INET || domain == AF_INET6 : domain == AF_SMC || proto == IPPROTO_SMC_) return KINDS[k->made - 1];
  return NULL;
}

// ---- the program's setsockopt() calls and bind() address, in order: what the TCP retry's new socket and
// a socket the policy keeps on TCP must be given again. Recorded only on sockets socket() made SMC, only
// before connect()/listen(), only with the retry on or rules: a page per fd number that ever had one,
// reused by the next socket under that number.
struct retry_log {
  uint64_t cookie;            // SO_COOKIE of the socket the entries belong to
  uint32_t used;              // bytes of data in use
  uint8_t unreplayable;       // an option that can't be set again, or the page ran full: no retry
  uint8_t bound;
  socklen_t bind_len;
  struct sockaddr_storage bind_addr;   // what the program asked for (ADDR:0 stays ADDR:0)
  unsigned char data[4096 - 160];
};
_Static_assert(sizeof(struct retry_log) <= 4096, "one page per fd");
struct log_entry { int level, name; uint32_t len; };

static int cookie_of(int fd, uint64_t *c) {
  socklen_t l = sizeof *c;
  return getsockopt(fd, SOL_SOCKET, SO_COOKIE, c, &l) == 0 && l == sizeof *c ? 0 : -1;
}

// fd's log, emptied for this socket on its first entry; NULL when nothing is to be recorded
static struct retry_log *log_for(int fd, struct known *k) {
  if ((!cfg.tcp_retry && !cfg.n_include && !cfg.n_exclude) || k->decided) return NULL;
  if (!k->log && !(k->log = map_zeroed(sizeof *k->log))) return NULL;
  if (!k->logged) {
    uint64_t c = 0;
    cookie_of(fd, &c);
    memset(k->log, 0, offsetof(struct retry_log, data));
    k->log->cookie = c;
    k->logged = 1;
  }
  return k->log;
}

// Options that carry a pointer or an fd, or that only make sense once: the retry can't set them again.
static int replayable(int level, int name) {
  if (level != SOL_SOCKET) return 1;
  return name != SO_ATTACH_FILTER && name != SO_ATTACH_BPF && name != SO_ATTACH_REUSEPORT_CBPF &&
         name != SO_ATTACH_REUSEPORT_EBPF && name != SO_DETACH_FILTER && name != SO_LOCK_FILTER;
}

static void record_option(int fd, int level, int name, const void *val, socklen_t len) {
  struct known *k = made_smc(fd);
  struct retry_log *log;
  if (!k || !(log = log_for(fd, k))) return;
  size_t need = sizeof(struct log_entry) + ((len + 7u) & ~7u);
  if (!replayable(level, name) || (len && !val) || log->used + need > sizeof log->data) {
    log->unreplayable = 1;
    return;
  }
  struct log_entry e = {level, name, len};
  memcpy(log->data + log->used, &e, sizeof e);
  if (len) memcpy(log->data + log->used + sizeof e, val, len);
  log->used += (uint32_t)need;
}

static void record_bind(int fd, const struct sockaddr *addr, socklen_t len) {
  struct known *k = made_smc(fd);
  struct retry_log *log;
  if (!k || !(log = log_for(fd, k))) return;
  if (len > sizeof log->bind_addr) { log->unreplayable = 1; return; }
  memcpy(&log->bind_addr, addr, len);
  log->bind_len = len;
  log->bound = 1;
}

// IP_TOS and IPV6_TCLASS set the socket's priority as a side effect, but only when the value changes: set
// again on a socket that has it, the value first goes elsewhere so that the side effect happens in order.
static void reapply_side_effect(int ns, const struct log_entry *e, const void *val) {
  int v;
  if (e->len < sizeof v || !((e->level == IPPROTO_IP && e->name == IP_TOS) || (e->level == IPPROTO_IPV6 && e->name == IPV6_TCLASS))) return;
  memcpy(&v, val, sizeof v);
  v ^= 0x04;
  real_setsockopt(ns, e->level, e->name, &v, sizeof v);
}

// Sets the recorded options on ns, in order; -1 (errno set) when ns refuses one: at once, or (keep_going)
// after trying the rest. from_socket_level: only from the first SOL_SOCKET entry on (the ones before it
// are on ns already, see keep_tcp).
static int replay_options(int ns, const struct retry_log *log, int keep_going, int from_socket_level) {
  int failed = 0, err = 0, started = !from_socket_level;
  for (uint32_t at = 0; at < log->used;) {
    struct log_entry e;
    memcpy(&e, log->data + at, sizeof e);
    const void *val = log->data + at + sizeof e;
    at += (uint32_t)(sizeof e + ((e.len + 7u) & ~7u));
    if (!started && e.level != SOL_SOCKET) continue;
    if (!started) started = 1;
    else if (from_socket_level) reapply_side_effect(ns, &e, val);
    if (real_setsockopt(ns, e.level, e.name, val, e.len) < 0) {
      if (!keep_going) return -1;
      failed = 1;
      err = errno;
    }
  }
  errno = err;
  return failed ? -1 : 0;
}

// ---- who else holds the socket: its dups and the epoll sets watching it (this process's; the retry
// puts its new socket under each dup and registers it again in each set, as the program had them)
#define MAX_DUPS 16
#define MAX_WATCHES 16
struct watch { int epfd, tfd; uint32_t events; uint64_t data; };
struct holders {
  int fd, self_dir;
  ino_t ino;
  int n_dups, n_watches, unknown;   // unknown: something could not be read or did not fit: no retry
  int dups[MAX_DUPS];
  struct watch watches[MAX_WATCHES];
};

static int parse_fd(const char *name) {
  int n = 0;
  for (; *name; name++) {
    if (*name < '0' || *name > '9' || n > 100000000) return -1;
    n = n * 10 + (*name - '0');
  }
  return n;
}

static unsigned long long hex_after(const char *line, const char *key, int *ok) {
  const char *p = strstr(line, key);
  if (!p) { *ok = 0; return 0; }
  p += strlen(key);
  while (*p == ' ' || *p == '\t') p++;
  char *end;
  unsigned long long v = strtoull(p, &end, 16);
  if (end == p) *ok = 0;
  return v;
}

// The registrations of the epoll set behind epfd that watch the socket: /proc/self/fdinfo/N has a line
// per watched file ("tfd: 5 events: 19 data: 5  pos:0 ino:2f sdev:8", numbers in hex but tfd).
static void epoll_watches(struct holders *h, int epfd) {
  char path[64], buf[8192];
  snprintf(path, sizeof path, "/proc/self/fdinfo/%d", epfd);
  int f = open(path, O_RDONLY | O_CLOEXEC);
  if (f < 0) { h->unknown = 1; return; }
  size_t have = 0;
  for (;;) {
    ssize_t r = read(f, buf + have, sizeof buf - 1 - have);
    if (r <= 0) break;
    have += (size_t)r;
    buf[have] = 0;
    char *line = buf, *nl;
    while ((nl = strchr(line, '\n'))) {
      *nl = 0;
      if (!strncmp(line, "tfd:", 4)) {
        int ok = 1;
        unsigned long long ino = hex_after(line, " ino:", &ok);
        if (ok && ino == (unsigned long long)h->ino) {
          struct watch w = {epfd, (int)strtol(line + 4, NULL, 10), (uint32_t)hex_after(line, "events:", &ok), hex_after(line, "data:", &ok)};
          if (!ok || h->n_watches >= MAX_WATCHES) h->unknown = 1;
          else h->watches[h->n_watches++] = w;
        }
      }
      line = nl + 1;
    }
    have = strlen(line);   // a line cut by the read: keep it for the next
    memmove(buf, line, have);
    if (have >= sizeof buf - 1) { h->unknown = 1; break; }
  }
  close(f);
}

static int check_holder(int dfd, const char *name, void *arg) {
  struct holders *h = arg;
  int n = parse_fd(name);
  if (n < 0 || n == h->fd || n == h->self_dir) return 0;
  char link[64], want[40];
  ssize_t l = readlinkat(dfd, name, link, sizeof link - 1);
  if (l <= 0) return 0;
  link[l] = 0;
  snprintf(want, sizeof want, "socket:[%lu]", (unsigned long)h->ino);
  if (!strcmp(link, want)) {
    if (h->n_dups >= MAX_DUPS) h->unknown = 1;
    else h->dups[h->n_dups++] = n;
  } else if (!strcmp(link, "anon_inode:[eventpoll]")) {
    epoll_watches(h, n);
  }
  return 0;
}

// 0 when every holder of fd's socket in this process is known (h filled in), -1 when not
static int find_holders(int fd, struct holders *h) {
  struct statx st;
  memset(h, 0, sizeof *h);
  if (statx_of(fd, "", AT_EMPTY_PATH, &st) < 0) return -1;
  int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return -1;
  h->fd = fd;
  h->self_dir = dfd;
  h->ino = (ino_t)st.stx_ino;
  int r = each_entry(dfd, check_holder, h);
  close(dfd);
  return r < 0 || h->unknown ? -1 : 0;
}

// The new socket (now under fd) under every dup too, each with its own close-on-exec flag, then in every
// epoll set as before (the old socket's registrations went with it); the count of what failed.
static int carry_over(int fd, const struct holders *h) {
  int failed = 0;
  for (int i = 0; i < h->n_dups; i++) {
    int fdfl = fcntl(h->dups[i], F_GETFD);
    if (dup3(fd, h->dups[i], fdfl >= 0 && (fdfl & FD_CLOEXEC) ? O_CLOEXEC : 0) < 0) failed++;
  }
  for (int i = 0; i < h->n_watches; i++) {
    struct epoll_event_ { uint32_t events; uint64_t data; } __attribute__((packed));
    // the kernel's struct epoll_event: packed on x86_64 only
#if defined(__x86_64__)
    struct epoll_event_ ev = {h->watches[i].events, h->watches[i].data};
#else
    struct { uint32_t events; uint64_t data; } ev = {h->watches[i].events, h->watches[i].data};
#endif
    if (syscall(SYS_epoll_ctl, h->watches[i].epfd, 1 /* EPOLL_CTL_ADD */, h->watches[i].tfd, &ev) < 0 && errno != EEXIST) failed++;
  }
  return failed;
}

// ---- sizes (-t/-r)
static void format_size(char *b, size_t n, long v) {
  if (v >= 1048576 && v % 1048576 == 0) snprintf(b, n, "%ldM", v / 1048576);
  else if (v >= 1024 && v % 1024 == 0) snprintf(b, n, "%ldk", v / 1024);
  else snprintf(b, n, "%ld", v);
}

// -t/-r on an SMC socket: what the kernel made of it, and one warning per process when it capped it
static int capped_warned;
static void report_size(int ns, int snd, long want) {
  int eff = 0;
  socklen_t l = sizeof eff;
  if (getsockopt(ns, SOL_SOCKET, snd ? SO_SNDBUF : SO_RCVBUF, &eff, &l) < 0) return;
  char a[32], b[32];
  format_size(a, sizeof a, want);
  format_size(b, sizeof b, eff / 2);   // the kernel doubles the value it stores; SMC sizes from half
  debugf("%s requested %s, effective %s {\"fd\":%d}", snd ? "sndbuf" : "rcvbuf", a, b, ns);
  if (eff / 2 < want && !__atomic_exchange_n(&capped_warned, 1, __ATOMIC_ACQ_REL)) {
    char m[300];
    snprintf(m, sizeof m, "%s %s capped by the kernel at %s; raise it with: sysctl -w %s=%ld", snd ? "sndbuf" : "rcvbuf", a, b,
             snd ? "net.core.wmem_max" : "net.core.rmem_max", want);
    log_line("WARN", 40, m);
  }
}

// ---- making SMC sockets
// type: SOCK_STREAM with the flags the socket must have; *kind: an index into KINDS
static int make_smc(int v6, int type, int *kind, int *unsupported) {
  const struct spec specs[2] = {{AF_SMC, v6 ? 1 : 0, "af_smc"}, {v6 ? AF_INET6 : AF_INET, IPPROTO_SMC_, "ipproto_smc"}};
  *unsupported = 0;
  if (cfg.test_mode) {
    *kind = 2;
    return real_socket(v6 ? AF_INET6 : AF_INET, type, 0);
  }
  int err = 0, first_err = 0;
  for (int i = 0; i < 2; i++) {
    if ((cfg.proto == PROTO_AF_SMC && i == 1) || (cfg.proto == PROTO_IPPROTO && i == 0)) continue;
    if (__atomic_load_n(&dead[v6][i], __ATOMIC_RELAXED)) continue;
    int ns = real_socket(specs[i].domain, type, specs[i].protocol);
    if (ns >= 0) { *kind = i; return ns; }
    err = errno;
    if (!first_err) first_err = err;
    if (err != EAFNOSUPPORT && err != EPROTONOSUPPORT && err != ESOCKTNOSUPPORT && err != EPFNOSUPPORT && err != EINVAL &&
        err != EPERM && err != EACCES) return -1;   // EMFILE and friends: this socket stays TCP, the next one tries
    __atomic_store_n(&dead[v6][i], 1, __ATOMIC_RELAXED);
  }
  *unsupported = 1;
  errno = first_err ? first_err : EAFNOSUPPORT;
  return -1;
}

// The one notice for a kernel that refused every SMC socket type --proto allows.
static void notice_no_smc(int v6, int err) {
  int afsmc = -1;
  char m[400];
  if (cfg.proto == PROTO_IPPROTO && (afsmc = real_socket(AF_SMC, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0) {
    close(afsmc);
    snprintf(m, sizeof m, "--proto ipproto: this kernel has no IPPROTO_SMC sockets (IPv%d: %s; they need Linux 6.11+): running on plain TCP; "
             "without --proto ipproto smc-run uses AF_SMC, which this kernel has", v6 ? 6 : 4, errname(err));
  } else {
    snprintf(m, sizeof m, "no SMC in this kernel (IPv%d: %s): running on plain TCP; the kernel needs CONFIG_SMC (try: modprobe smc; check: smc-run doctor)",
             v6 ? 6 : 4, errname(err));
  }
  notice_once(&noticed_fallback, NULL, m);
}

// A TCP socket() call answered with an SMC socket of the same type; -1 (errno kept) when the kernel
// has none: the caller makes the TCP socket then.
static int smc_at_socket(int v6, int type) {
  int saved_errno = errno, kind = 0, unsupported;
  int fd = make_smc(v6, type, &kind, &unsupported);
  if (fd < 0) {
    if (unsupported) notice_no_smc(v6, errno);
    else debugf("socket: SMC socket failed, plain TCP: %s", errname(errno));
    errno = saved_errno;
    return -1;
  }
  // -t/-r: the program has set nothing yet; a size it sets later replaces these
  for (int snd = 0; snd < 2; snd++) {
    long want = snd ? cfg.sndbuf : cfg.rcvbuf;
    int val = (int)want;
    if (want < 0) continue;
    if (real_setsockopt(fd, SOL_SOCKET, snd ? SO_SNDBUF : SO_RCVBUF, &val, sizeof val) < 0) {
      debugf("socket: the SMC socket refused %s %ld (%s): plain TCP", snd ? "sndbuf" : "rcvbuf", want, errname(errno));
      close(fd);
      errno = saved_errno;
      return -1;
    }
    report_size(fd, snd, want);
  }
  struct known *k = known_slot(fd, 1);
  if (k) {
    k->decided = k->listening = k->logged = 0;
    k->made = (uint8_t)(kind + 1);
  }
  errno = saved_errno;
  return fd;
}

// ---- the policy, in place
static int has_rules(void) { return cfg.n_include || cfg.n_exclude; }

// Makes the SMC socket fd plain TCP before its connect() or listen(), on the same fd: SMC falls back
// when a TCP_FASTOPEN* option is set in SMC_INIT (net/smc/af_smc.c, smc_setsockopt); 0 (TCP's default
// for TCP_FASTOPEN_NO_COOKIE) reaches the internal TCP socket unchanged. The fallback hands the fd's file
// to that internal socket (smc_switch_to_fallback), which never received the socket-level options set on
// the SMC socket (SO_RCVTIMEO, SO_MARK, SO_BINDTODEVICE, SO_LINGER, ...: SMC copies them only in its own
// connect and listen, which no longer run): they are set again there, in the program's order, with every
// option that followed them (options of the other levels reached the internal socket when they were set:
// smc_setsockopt passes them on). In test mode the socket is TCP already and has them all.
static void keep_tcp(int fd, const char *op, struct where *w, const struct known *k) {
  const struct retry_log *log = k && k->logged ? k->log : NULL;
  uint64_t c;
  if (log && (cookie_of(fd, &c) < 0 || c != log->cookie)) log = NULL;
  int zero = 0;
  if (real_setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_NO_COOKIE, &zero, sizeof zero) == 0) {
    debugf("%s %s:%d excluded by policy: plain TCP", op, wtext(w), w->port);
    if (log && !cfg.test_mode && replay_options(fd, log, 1, 1) < 0)
      debugf("%s %s:%d: an option the program set could not be set again on the TCP socket: %s", op, wtext(w), w->port, errname(errno));
    if (log && log->unreplayable)
      debugf("%s %s:%d: a filter program (or more options than recorded) set before could not be carried to the TCP socket", op, wtext(w), w->port);
    return;
  }
  char m[300];
  snprintf(m, sizeof m, "%s %s:%d is excluded by policy, but this kernel did not switch the SMC socket to TCP (%s): it goes over SMC", op,
           wtext(w), w->port, errname(errno));
  notice_once(&noticed_in_place, "in-place", m);
}

// ---- the TCP retry (src/hook/tcp-retry.ts): errors an SMC connect returns only after its TCP handshake
static int smc_handshake_failed(int fd, int err) {
  if (err == ECONNRESET || err == EPROTO || err == EPIPE || err == ECONNABORTED) return 1;
  if (err != ETIMEDOUT) return 0;
  // ETIMEDOUT is the CLC wait and a SYN timeout alike: a socket that received a segment had its handshake
  unsigned char info[TCPI_SEGS_IN + 4];
  socklen_t l = sizeof info;
  memset(info, 0, sizeof info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, info, &l) < 0 || l < sizeof info) return 0;
  uint32_t segs_in;
  memcpy(&segs_in, info + TCPI_SEGS_IN, 4);
  return info[0] != TCP_STATE_CLOSE || segs_in > 0;
}

// Why the failed socket can't be replaced, or NULL when it can (h: its other holders).
static const char *no_retry_reason(int fd, const struct known *k, struct retry_log **log, struct holders *h) {
  *log = k->logged ? k->log : NULL;
  uint64_t c;
  if (*log && (cookie_of(fd, &c) < 0 || c != (*log)->cookie)) return "the socket under the fd is not the one socket() made";
  if (*log && (*log)->unreplayable) return "the program set an option a new socket can't be given (a filter program, or too many options)";
  if (find_holders(fd, h) < 0) return "the socket's other fds and epoll registrations could not all be read";
  return NULL;
}

static int retry_over_tcp(int fd, int v6, struct known *k, const struct sockaddr *addr, socklen_t len, struct where *w, int err) {
  struct retry_log *log;
  struct holders h;
  const char *why = no_retry_reason(fd, k, &log, &h);
  if (why) {
    debugf("connect %s:%d: SMC handshake failed (%s); no TCP retry: %s", wtext(w), w->port, errname(err), why);
    errno = err;
    return -1;
  }
  int bound = log && log->bound;
  const struct sockaddr_in *in = bound ? (const void *)&log->bind_addr : NULL;
  // ADDR:0 is bound before the swap, to a new port (the failed connection may still hold its own);
  // ADDR:PORT after it, when the failed socket has let go of that port
  int port_asked = bound && (in->sin_family == AF_INET || in->sin_family == AF_INET6) && in->sin_port != 0;
  int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);
  int ns = real_socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (ns < 0 || (log && replay_options(ns, log, 0, 0) < 0) || (bound && !port_asked && real_bind(ns, (const struct sockaddr *)&log->bind_addr, log->bind_len) < 0) ||
      (fl >= 0 && fcntl(ns, F_SETFL, fl) < 0) || dup3(ns, fd, fdfl >= 0 && (fdfl & FD_CLOEXEC) ? O_CLOEXEC : 0) < 0) {
    int e = errno;
    if (ns >= 0) close(ns);
    debugf("connect %s:%d: SMC handshake failed (%s), TCP retry impossible: %s", wtext(w), w->port, errname(err), errname(e));
    errno = err;
    return -1;
  }
  close(ns);
  k->made = 0;
  int lost = carry_over(fd, &h);
  if (lost) debugf("connect %s:%d: the TCP retry could not give %d dup(s) or epoll registration(s) the new socket", wtext(w), w->port, lost);
  if (port_asked && real_bind(fd, (const struct sockaddr *)&log->bind_addr, log->bind_len) < 0) {
    debugf("connect %s:%d: SMC handshake failed (%s); the TCP retry could not bind the program's port again: %s", wtext(w), w->port, errname(err),
           errname(errno));
    errno = err;
    return -1;
  }
  debugf("connect %s:%d: SMC handshake failed (%s); retrying over plain TCP on fd %d%s", wtext(w), w->port, errname(err), fd,
         h.n_dups || h.n_watches ? " (its dups and epoll registrations too)" : "");
  notice_once(&noticed_retry, "tcp-retry",
              "an SMC handshake failed under load and the connection was retried over plain TCP; on the server: a listen backlog above "
              "the burst size (listen(fd, 4096); net.core.somaxconn caps it), and net.smc.limit_smc_hs=1; see: smc-run doctor");
  errno = 0;
  return real_connect(fd, addr, len);
}

// ---- the interposed calls
// Before the library is ready (a signal handler interrupting its own first use): straight to the kernel.
#define RAW(...) syscall(__VA_ARGS__)

API int socket(int domain, int type, int protocol) {
  if (!ensure_init()) return (int)RAW(SYS_socket, domain, type, protocol);
  int tcp = !cfg.disabled && (domain == AF_INET || domain == AF_INET6) && (type & 0xf) == SOCK_STREAM &&
            (protocol == 0 || protocol == IPPROTO_TCP);
  if (tcp) {
    int fd = smc_at_socket(domain == AF_INET6, type);
    if (fd >= 0) return fd;
  }
  return real_socket(domain, type, protocol);
}

API int bind(int fd, const struct sockaddr *addr, socklen_t len) {
  if (!ensure_init()) return (int)RAW(SYS_bind, fd, addr, len);
  int rc = real_bind(fd, addr, len);
  if (rc == 0 && !cfg.disabled && addr) {
    int saved_errno = errno;
    record_bind(fd, addr, len);
    errno = saved_errno;
  }
  return rc;
}

API int setsockopt(int fd, int level, int name, const void *val, socklen_t len) {
  if (!ensure_init()) return (int)RAW(SYS_setsockopt, fd, level, name, val, len);
  int rc = real_setsockopt(fd, level, name, val, len);
  if (rc == 0 && !cfg.disabled) {
    int saved_errno = errno;
    record_option(fd, level, name, val, len);
    errno = saved_errno;
  }
  return rc;
}

API int connect(int fd, const struct sockaddr *addr, socklen_t len) {
  if (!ensure_init()) return (int)RAW(SYS_connect, fd, addr, len);
  if (cfg.disabled || !addr || (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)) return real_connect(fd, addr, len);
  int saved_errno = errno;
  struct known *k = made_smc(fd);
  struct where w;
  int have_where = read_where(addr, len, &w) == 0;
  if (have_where) as_destination(&w);
  if (!k) {
    // a socket of ours under another fd number, or inherited: the policy holds there too
    if (has_rules() && have_where && unrecorded_smc(fd) && !wants_smc(&w)) keep_tcp(fd, "connect", &w, NULL);
    errno = saved_errno;
    return real_connect(fd, addr, len);
  }
  if (k->decided) { errno = saved_errno; return real_connect(fd, addr, len); }   // a repeated connect(): EALREADY, EISCONN
  k->decided = 1;
  int smc = 1;
  if (has_rules() && have_where && !wants_smc(&w)) {
    keep_tcp(fd, "connect", &w, k);
    smc = 0;
  } else if (cfg.debug && have_where) {
    const char *kind = made_kind(fd, k);
    if (kind) debugf("connect %s:%d on %s fd %d", wtext(&w), w.port, kind, fd);
  }
  errno = saved_errno;
  int rc = real_connect(fd, addr, len);
  if (!smc || !cfg.tcp_retry || !have_where || (rc == 0 && !cfg.test_mode) || (cfg.test_mode && !cfg.test_fault)) return rc;
  int err = rc < 0 ? errno : 0;
  // Blocking connects only: a non-blocking one completes later, seen through poll/epoll and SO_ERROR,
  // where no new socket can take its place unseen.
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || (fl & O_NONBLOCK) || !made_kind(fd, k)) { errno = err; return rc; }
  if (cfg.test_mode) {   // with a fault to inject (the line above returned without one)
    if (rc < 0) { errno = err; return rc; }
    // TEST ONLY: this completion counts as a failed SMC handshake; the connection is reset (no
    // TIME_WAIT), as a handshake that failed with ECONNRESET leaves it
    struct linger reset = {1, 0};
    real_setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    err = cfg.test_fault;
  } else if (!smc_handshake_failed(fd, err)) {
    errno = err;
    return rc;
  }
  return retry_over_tcp(fd, addr->sa_family == AF_INET6, k, addr, len, &w, err);
}

API int listen(int fd, int backlog) {
  if (!ensure_init()) return (int)RAW(SYS_listen, fd, backlog);
  if (cfg.disabled) return real_listen(fd, backlog);
  int saved_errno = errno;
  struct known *k = made_smc(fd);
  if ((k && !k->decided) || (!k && has_rules())) {
    struct sockaddr_storage local;
    socklen_t l = sizeof local;
    struct where w;
    int have_where = getsockname(fd, (struct sockaddr *)&local, &l) == 0 && read_where((struct sockaddr *)&local, l, &w) == 0;
    if (k) k->decided = 1;
    if (have_where && has_rules() && !wants_smc(&w) && (k || unrecorded_smc(fd))) {
      keep_tcp(fd, "listen", &w, k);
    } else if (k && cfg.debug && have_where) {
      const char *kind = made_kind(fd, k);
      if (kind) debugf("listen %s:%d on %s fd %d", wtext(&w), w.port, kind, fd);
    }
  }
  errno = saved_errno;
  int rc = real_listen(fd, backlog);
  if (rc == 0 && k) k->listening = 1;
  return rc;
}

// smc_accept() returns the error of a queued connection whose SMC handshake failed after it was queued
// (sock_error of the new socket, net/smc/af_smc.c); a TCP listener never reports one connection's
// failure, and a server may stop accepting on it. On listeners of ours those errors are dropped and the
// next connection is taken (as src/hook/accept-guard.ts does for Node); a non-blocking listener then
// answers EAGAIN as for any wake-up without a connection.
static int per_connection_error(int e) {
  return e == ECONNRESET || e == ETIMEDOUT || e == ECONNREFUSED || e == ECONNABORTED || e == EPIPE || e == EPROTO || e == EHOSTUNREACH ||
         e == ENETUNREACH || e == ENOTCONN || e == EHOSTDOWN || e == ENETDOWN;
}

static int accept_faulted;
static int accept_guarded(int fd, struct sockaddr *addr, socklen_t *len, int flags, int four) {
  socklen_t asked = len ? *len : 0;
  for (;;) {
    if (len) *len = asked;
    int rc = four ? real_accept4(fd, addr, len, flags) : real_accept(fd, addr, len);
    if (rc >= 0 && cfg.test_accept_fault && !__atomic_exchange_n(&accept_faulted, 1, __ATOMIC_ACQ_REL)) {
      close(rc);   // TEST ONLY: as if this connection's SMC handshake had failed after it was queued
      rc = -1;
      errno = cfg.test_accept_fault;
    }
    if (rc >= 0 || !per_connection_error(errno)) return rc;
    debugf("accept on fd %d: one connection failed before it was accepted (%s): dropped, as TCP never reports it", fd, errname(errno));
  }
}

API int accept(int fd, struct sockaddr *addr, socklen_t *len) {
  if (!ensure_init()) return (int)RAW(SYS_accept4, fd, addr, len, 0);
  struct known *k;
  if (cfg.disabled || !(k = made_smc(fd)) || !k->listening) return real_accept(fd, addr, len);
  return accept_guarded(fd, addr, len, 0, 0);
}

API int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
  if (!ensure_init()) return (int)RAW(SYS_accept4, fd, addr, len, flags);
  struct known *k;
  if (cfg.disabled || !(k = made_smc(fd)) || !k->listening) return real_accept4(fd, addr, len, flags);
  return accept_guarded(fd, addr, len, flags, 1);
}
