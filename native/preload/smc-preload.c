// smc-preload.so: the launcher's LD_PRELOAD library for programs that are not Node. Without --include or
// --exclude every TCP socket is SMC from socket() on, as smc-tools' smc_run makes it: nothing to decide
// later, nothing to pay at connect. With rules, a TCP socket becomes SMC where the program decides where
// it goes: at connect() (policy by destination) and listen() (by local address). The SMC socket then takes
// the TCP socket's place under the same fd number (dup3), with its O_NONBLOCK/FD_CLOEXEC and the options
// the program set (socket() and setsockopt() are watched to know which: "what the program set"); a bound
// socket is bound again to the same address.
// Same SMC_RUN_* variables, policy, debug lines and notices as the Node shim (src/config.ts,
// src/policy/rules.ts, src/log.ts, src/hook/notice.ts, src/hook/tcp-retry.ts). Inert in Node processes.
// Build: native/preload/build.sh (glibc 2.28 symbols: dlsym pinned to its base version, no pthread_once).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>
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

enum { PROTO_AUTO, PROTO_AF_SMC, PROTO_IPPROTO };
struct rule { int family; int prefix; int port; uint8_t addr[16]; };   // family 0 = any address, port -1 = any
struct spec { int domain, protocol; const char *kind; };

static struct {
  int disabled, debug, json, test_mode, proto, tcp_retry, test_fault;
  long sndbuf, rcvbuf;
  int tcp_sndbuf, tcp_rcvbuf;   // a fresh TCP socket's defaults: a different value was set by the program
  const char *session;
  struct rule *include, *exclude;
  int n_include, n_exclude;
} cfg;

static int (*real_connect)(int, const struct sockaddr *, socklen_t);
static int (*real_listen)(int, int);
static int (*real_socket)(int, int, int);
static int (*real_setsockopt)(int, int, int, const void *, socklen_t);
static int (*real_bind)(int, const struct sockaddr *, socklen_t);
static int dead[2][2];          // [v6][spec]: the kernel refused this socket type (EAFNOSUPPORT, ...)
static int noticed_fallback, noticed_retry;

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
    default: return strerror(e);
  }
}

// ---- notices: once per process tree, as src/hook/notice.ts does it (same marker files)
// The marker's directory and name; keep in step with noticeMarkerPath() in src/hook/notice.ts.
static int notice_marker_path(char *buf, size_t n, const char *name) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = getenv("TMP");
  if (!dir || !*dir) dir = getenv("TEMP");
  if (!dir || !*dir) dir = "/tmp";
  size_t dl = strlen(dir);
  if (dl > 1 && dir[dl - 1] == '/') dl--;
  char clean[256];
  size_t c = 0;
  for (; *name && c + 1 < sizeof clean; name++)
    if ((*name >= 'A' && *name <= 'Z') || (*name >= 'a' && *name <= 'z') || (*name >= '0' && *name <= '9') || *name == '_' || *name == '-') clean[c++] = *name;
  clean[c] = 0;
  int len = snprintf(buf, n, "%.*s/smc-run-%u-%s.notice", (int)dl, dir, (unsigned)getuid(), clean);
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

// sweepStaleMarkers() of notice.ts: this user's markers whose session's process is gone
static void sweep_markers(const char *marker) {
  char dir[600], prefix[64];
  snprintf(dir, sizeof dir, "%s", marker);
  char *slash = strrchr(dir, '/');
  if (!slash) return;
  *slash = 0;
  int pl = snprintf(prefix, sizeof prefix, "smc-run-%u-", (unsigned)getuid());
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t nl = strlen(e->d_name);
    if (strncmp(e->d_name, prefix, (size_t)pl) || nl < (size_t)pl + 7 || strcmp(e->d_name + nl - 7, ".notice")) continue;
    char session[256];
    snprintf(session, sizeof session, "%.*s", (int)(nl - (size_t)pl - 7), e->d_name + pl);
    if (session_alive(session)) continue;
    char path[800];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  closedir(d);
}

static void notice_once(int *shown, const char *kind, const char *msg) {
  if (__atomic_exchange_n(shown, 1, __ATOMIC_ACQ_REL)) return;
  int saved = errno;
  if (cfg.session) {
    char name[300], path[600];
    snprintf(name, sizeof name, kind ? "%s-%s" : "%s", cfg.session, kind);
    if (notice_marker_path(path, sizeof path, name) == 0) {
      int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0 && errno == EEXIST) { errno = saved; return; }
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

// parseRule() of src/policy/rules.ts: "10.0.0.0/8", "10.1.2.3:5432", "[fd00::]/8:443", "::1", "*:6379"
static int parse_rule(const char *t, struct rule *r) {
  char addr[80];
  const char *port = NULL;
  size_t n = strlen(t);
  if (n >= sizeof addr) return -1;
  r->port = -1;
  if (t[0] == '[') {
    const char *close_ = strchr(t, ']');
    if (!close_) return -1;
    const char *rest = close_ + 1;
    const char *colon = strchr(rest, ':');
    size_t pre = colon ? (size_t)(colon - rest) : strlen(rest);
    if (pre && rest[0] != '/') return -1;
    snprintf(addr, sizeof addr, "%.*s%.*s", (int)(close_ - t - 1), t + 1, (int)pre, rest);
    if (colon) port = colon + 1;
  } else if (strchr(t, '.') || t[0] == '*') {
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
  return 0;
}

static int parse_rules(const char *name, struct rule **out, int *count) {
  const char *text = getenv(name);
  *out = NULL;
  *count = 0;
  if (!text || !*text) return 0;
  *out = calloc(strlen(text) / 2 + 1, sizeof **out);
  if (!*out) return -1;
  const char *p = text;
  while (*p) {
    p += strspn(p, " \t\n\r,");
    size_t len = strcspn(p, " \t\n\r,");
    if (!len) break;
    char tok[96];
    snprintf(tok, sizeof tok, "%.*s", (int)len, p);
    if (len >= sizeof tok || parse_rule(tok, &(*out)[*count]) < 0) {
      char m[300];
      snprintf(m, sizeof m, "smc-run: ignoring SMC: %s: \"%s\" is not an address or CIDR (examples: 10.0.0.0/8, 10.1.2.3:5432, [fd00::]/8:443)\n", name, tok);
      if (write(2, m, strlen(m)) < 0) { /* stderr closed */ }
      return -1;
    }
    (*count)++;
    p += len;
  }
  return 0;
}

static void config_error(const char *name, const char *value, const char *want) {
  char m[400];
  snprintf(m, sizeof m, "smc-run: ignoring SMC: %s=%s: %s\n", name, value, want);
  if (write(2, m, strlen(m)) < 0) { /* stderr closed */ }
  cfg.disabled = 1;
}

static void forget_all(void);

static void read_config(void) {
  memset(&cfg, 0, sizeof cfg);
  cfg.sndbuf = cfg.rcvbuf = -1;
  real_connect = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
  real_listen = (int (*)(int, int))dlsym(RTLD_NEXT, "listen");
  real_socket = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
  real_setsockopt = (int (*)(int, int, int, const void *, socklen_t))dlsym(RTLD_NEXT, "setsockopt");
  real_bind = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "bind");
  if (!real_connect || !real_listen || !real_socket || !real_setsockopt || !real_bind) { cfg.disabled = 1; return; }
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
  cfg.session = getenv("SMC_RUN_SESSION");
  if (cfg.session && !*cfg.session) cfg.session = NULL;
  if (parse_rules("SMC_RUN_INCLUDE", &cfg.include, &cfg.n_include) < 0 ||
      parse_rules("SMC_RUN_EXCLUDE", &cfg.exclude, &cfg.n_exclude) < 0) { cfg.disabled = 1; return; }
  pthread_atfork(NULL, NULL, forget_all);
  int probe = real_socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  socklen_t l = sizeof(int);
  if (probe < 0 || getsockopt(probe, SOL_SOCKET, SO_SNDBUF, &cfg.tcp_sndbuf, &l) < 0 ||
      getsockopt(probe, SOL_SOCKET, SO_RCVBUF, &cfg.tcp_rcvbuf, &l) < 0) cfg.tcp_sndbuf = cfg.tcp_rcvbuf = -1;
  if (probe >= 0) close(probe);
}

// Once per process, thread-safe. Not pthread_once: glibc 2.34 moved it into libc under a new symbol
// version. A child forked while another thread initialised starts over.
static int init_state;   // 0 none, 1 running, 2 done
static pid_t init_pid;
static void ensure_init(void) {
  if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2) return;
  int saved = errno;
  for (;;) {
    int expected = 0;
    if (__atomic_compare_exchange_n(&init_state, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      init_pid = getpid();
      read_config();
      __atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
      break;
    }
    if (expected == 2) break;
    if (init_pid && init_pid != getpid()) __atomic_compare_exchange_n(&init_state, &expected, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    else sched_yield();
  }
  errno = saved;
}

// ---- policy (wantsSmc() of src/policy/rules.ts); ::ffff:a.b.c.d is the IPv4 address a.b.c.d
struct where { int family; uint8_t addr[16]; int port; int wildcard; char text[INET6_ADDRSTRLEN + 8]; };

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
  inet_ntop(sa->sa_family, sa->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr
                                                    : (const void *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, w->text, sizeof w->text);
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

static int wants_smc(const struct where *w) {
  for (int i = 0; i < cfg.n_exclude; i++)
    if (rule_matches(&cfg.exclude[i], w)) return 0;
  if (!cfg.n_include) return 1;
  for (int i = 0; i < cfg.n_include; i++) {
    // a wildcard listener must be SMC for any included peer to reach it over SMC
    if (w->wildcard ? (cfg.include[i].port < 0 || cfg.include[i].port == w->port) : rule_matches(&cfg.include[i], w)) return 1;
  }
  return 0;
}

// ---- the socket swap
// What the program may have set before connect()/listen() that the new socket must have too.
static const struct { int level, name; } OPTS[] = {
  {SOL_SOCKET, SO_REUSEADDR}, {SOL_SOCKET, SO_REUSEPORT}, {SOL_SOCKET, SO_KEEPALIVE}, {SOL_SOCKET, SO_SNDBUF},
  {SOL_SOCKET, SO_RCVBUF}, {SOL_SOCKET, SO_LINGER}, {SOL_SOCKET, SO_PRIORITY}, {SOL_SOCKET, SO_RCVLOWAT},
  {SOL_SOCKET, SO_OOBINLINE},
  {IPPROTO_TCP, TCP_NODELAY}, {IPPROTO_TCP, TCP_KEEPIDLE}, {IPPROTO_TCP, TCP_KEEPINTVL}, {IPPROTO_TCP, TCP_KEEPCNT},
  {IPPROTO_TCP, TCP_USER_TIMEOUT}, {IPPROTO_TCP, TCP_MAXSEG}, {IPPROTO_TCP, TCP_DEFER_ACCEPT}, {IPPROTO_TCP, TCP_FASTOPEN},
  {IPPROTO_TCP, TCP_NOTSENT_LOWAT}, {IPPROTO_TCP, TCP_CONGESTION},
  {IPPROTO_IP, IP_TOS}, {IPPROTO_IP, IP_TTL}, {IPPROTO_IP, IP_FREEBIND}, {IPPROTO_IP, IP_TRANSPARENT},
  {IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT},
  {IPPROTO_IPV6, IPV6_V6ONLY}, {IPPROTO_IPV6, IPV6_TCLASS}, {IPPROTO_IPV6, IPV6_UNICAST_HOPS},
};
#define N_OPTS (sizeof OPTS / sizeof *OPTS)
#define OPT_SNDBUF 3
#define OPT_RCVBUF 4
#define OPT_REUSEADDR 0
#define ALL_OPTS ((1u << N_OPTS) - 1)
_Static_assert(N_OPTS <= 32, "one bit per option in struct known");
struct opt { unsigned char v[16]; socklen_t len; int ok; };
struct saved {
  struct opt o[N_OPTS];
  uint32_t set;   // the OPTS entries to copy: what the program set, or all of them (see options_set)
  int nonblock, cloexec, bound;
  struct sockaddr_storage local;
  socklen_t local_len;
};

static int opt_int(const struct opt *o) { int v = 0; memcpy(&v, o->v, sizeof v); return v; }

static int opt_index(int level, int name) {
  for (size_t i = 0; i < N_OPTS; i++)
    if (OPTS[i].level == level && OPTS[i].name == name) return (int)i;
  return -1;
}

// ---- what the program set
// The swap copies the options the program set. Reading every OPTS entry on both sockets costs about
// fifty syscalls per connect, so the sockets this process made with socket() are remembered with the
// OPTS entries setsockopt() was called for, and only those are copied. A record names its socket by
// SO_COOKIE (never reused), so a record left by a closed fd is seen as stale. Whatever can't be told
// apart (a socket inherited, received or made by a raw syscall; a setsockopt through another fd number
// of the same socket; anything from before a fork) falls back to copying every entry.
struct known {
  uint64_t cookie;
  uint32_t set, epoch;
  uint8_t made;    // socket() made it SMC (policy-free runs): its kind + 1, see made_smc()
  uint8_t bound;   // ... and the program called bind() on it
};
#define KNOWN_CHUNK 1024
#define KNOWN_CHUNKS 1024   // fds below 1,048,576 are remembered; higher ones take the full copy
static struct known *known_chunks[KNOWN_CHUNKS];
static uint32_t epoch = 1;   // a record from another epoch is void

static void forget_all(void) { __atomic_add_fetch(&epoch, 1, __ATOMIC_ACQ_REL); }

static int cookie_of(int fd, uint64_t *c) {
  socklen_t l = sizeof *c;
  return getsockopt(fd, SOL_SOCKET, SO_COOKIE, c, &l) == 0 && l == sizeof *c ? 0 : -1;
}

// fd's record; with create, its chunk is made first (mmap: socket() is async-signal-safe, malloc is not)
static struct known *known_slot(int fd, int create) {
  if (fd < 0 || fd >= KNOWN_CHUNK * KNOWN_CHUNKS) return NULL;
  struct known **chunk = &known_chunks[fd / KNOWN_CHUNK];
  struct known *c = __atomic_load_n(chunk, __ATOMIC_ACQUIRE);
  if (!c && create) {
    void *m = mmap(NULL, KNOWN_CHUNK * sizeof *c, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    c = m;
    struct known *expected = NULL;
    if (!__atomic_compare_exchange_n(chunk, &expected, c, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      munmap(m, KNOWN_CHUNK * sizeof *c);
      c = expected;
    }
  }
  return c ? &c[fd % KNOWN_CHUNK] : NULL;
}

// fd's record if it names the socket under fd now
static struct known *known_socket(int fd) {
  struct known *k = known_slot(fd, 0);
  uint64_t c;
  if (!k || !k->cookie || k->epoch != __atomic_load_n(&epoch, __ATOMIC_ACQUIRE) || cookie_of(fd, &c) < 0 || c != k->cookie) return NULL;
  return k;
}

static void remember(int fd) {
  struct known *k = known_slot(fd, 1);
  uint64_t c;
  if (!k) return;
  k->cookie = 0;
  k->made = 0;
  if (cookie_of(fd, &c) < 0) return;
  k->set = 0;
  k->epoch = __atomic_load_n(&epoch, __ATOMIC_ACQUIRE);
  __atomic_store_n(&k->cookie, c, __ATOMIC_RELEASE);
}

static struct known *made_smc(int fd);

static void note_option(int fd, int level, int name) {
  int i = opt_index(level, name);
  if (i < 0) return;   // not copied by the swap
  struct known *k = made_smc(fd);
  if (!k) k = known_socket(fd);
  if (k) __atomic_fetch_or(&k->set, 1u << i, __ATOMIC_RELAXED);
  else forget_all();   // maybe another fd number of a remembered socket
}

// Whether fd is a TCP socket; *set: the OPTS entries to copy from it.
static int options_set(int fd, uint32_t *set) {
  struct known *k = known_socket(fd);
  if (k) {
    *set = __atomic_load_n(&k->set, __ATOMIC_RELAXED);
    return 1;
  }
  int proto = 0;
  socklen_t l = sizeof proto;
  *set = ALL_OPTS;
  return getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l) == 0 && proto == IPPROTO_TCP;
}

static void save_options(int fd, int v6, struct saved *s) {
  for (size_t i = 0; i < N_OPTS; i++) {
    s->o[i].len = sizeof s->o[i].v;
    memset(s->o[i].v, 0, sizeof s->o[i].v);
    // IPv6 options fail on an IPv4 socket (ENOPROTOOPT): nothing to copy then
    s->o[i].ok = (s->set & (1u << i)) && (OPTS[i].level != IPPROTO_IPV6 || v6) &&
                 getsockopt(fd, OPTS[i].level, OPTS[i].name, s->o[i].v, &s->o[i].len) == 0;
  }
  int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);
  s->nonblock = fl >= 0 && (fl & O_NONBLOCK);
  s->cloexec = fdfl >= 0 && (fdfl & FD_CLOEXEC);
}

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

// Puts the program's options on the new socket (those of a socket we can't tell about where they
// differ from the new socket's); -1 when one fails.
static int apply_options(int ns, const struct saved *s, int smc) {
  for (size_t i = 0; i < N_OPTS; i++) {
    const struct opt *o = &s->o[i];
    int val = opt_int(o);
    if (i == OPT_SNDBUF || i == OPT_RCVBUF) {
      int snd = i == OPT_SNDBUF, dflt = snd ? cfg.tcp_sndbuf : cfg.tcp_rcvbuf;
      long want = snd ? cfg.sndbuf : cfg.rcvbuf;
      // the program's own size wins; -t/-r apply to SMC sockets the program left at the default
      int own = o->ok && dflt >= 0 && val != dflt;
      if (own) val /= 2;   // the kernel stored twice what was asked
      else if (smc && want >= 0) val = (int)want;
      else continue;
      if (real_setsockopt(ns, SOL_SOCKET, OPTS[i].name, &val, sizeof val) < 0) return -1;
      if (!own) report_size(ns, snd, want);
      continue;
    }
    if (!o->ok) continue;
    if (s->set == ALL_OPTS) {
      struct opt now;
      now.len = sizeof now.v;
      memset(now.v, 0, sizeof now.v);
      if (getsockopt(ns, OPTS[i].level, OPTS[i].name, now.v, &now.len) == 0 && now.len == o->len && !memcmp(now.v, o->v, o->len)) continue;
    }
    if (i == OPT_REUSEADDR && val == 0) continue;   // set by rebind() when bound, restored there
    if (real_setsockopt(ns, OPTS[i].level, OPTS[i].name, o->v, o->len) < 0) return -1;
  }
  return 0;
}

// The socket() call that makes an SMC socket for a family, in the order --proto says.
static const char *const KINDS[3] = {"af_smc", "ipproto_smc", "inet (test mode)"};
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

// Binds the new socket where the old one is, while the old one still holds the address: both get
// SO_REUSEADDR for that moment (two non-listening sockets may share an address then).
static int rebind(int fd, int ns, const struct saved *s) {
  int one = 1, zero = 0, old_reuse = opt_int(&s->o[OPT_REUSEADDR]);
  if (!old_reuse) real_setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  real_setsockopt(ns, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int rc = real_bind(ns, (const struct sockaddr *)&s->local, s->local_len);
  if (!old_reuse) {
    real_setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &zero, sizeof zero);
    real_setsockopt(ns, SOL_SOCKET, SO_REUSEADDR, &zero, sizeof zero);
  }
  return rc;
}

// Puts the socket ns under fd's number (closing fd's socket) with fd's close-on-exec flag.
static int swap_in(int fd, int ns, const struct saved *s) {
  int rc = dup3(ns, fd, s->cloexec ? O_CLOEXEC : 0);
  close(ns);
  return rc < 0 ? -1 : 0;
}

// Whether fd is a TCP socket nobody connected or listened on yet; fills in its family and binding.
static int fresh_tcp(int fd, struct saved *s, int *v6) {
  if (!options_set(fd, &s->set)) return 0;
  socklen_t l;
  s->local_len = sizeof s->local;
  if (getsockname(fd, (struct sockaddr *)&s->local, &s->local_len) < 0) return 0;
  struct where w;
  if (read_where((struct sockaddr *)&s->local, s->local_len, &w) < 0) return 0;
  *v6 = s->local.ss_family == AF_INET6;
  s->bound = w.port != 0 || !w.wildcard;
  if (w.port != 0) {
    // bound, connecting, connected or listening: only the first is still ours to change
    unsigned char state = 0;
    l = 1;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &state, &l) < 0 || state != TCP_STATE_CLOSE) return 0;
  }
  return 1;
}

// Replaces fd's TCP socket with an SMC one; 0 on success, -1 when fd stays as it was.
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

static int become_smc(int fd, int v6, struct saved *s, const char *op, const struct where *w) {
  save_options(fd, v6, s);
  int kind = 0, unsupported;
  int ns = make_smc(v6, SOCK_STREAM | SOCK_CLOEXEC | (s->nonblock ? SOCK_NONBLOCK : 0), &kind, &unsupported);
  if (ns < 0) {
    if (unsupported) {
      notice_no_smc(v6, errno);
    } else {
      debugf("%s %s:%d: SMC socket failed, staying TCP: %s", op, w->text, w->port, strerror(errno));
    }
    return -1;
  }
  if (apply_options(ns, s, 1) < 0 || (s->bound && rebind(fd, ns, s) < 0)) {
    debugf("%s %s:%d: the SMC socket refused the program's options or address (%s): plain TCP", op, w->text, w->port, strerror(errno));
    close(ns);
    return -1;
  }
  if (swap_in(fd, ns, s) < 0) return -1;
  debugf("%s %s:%d on %s fd %d", op, w->text, w->port, KINDS[kind], fd);
  return 0;
}

// ---- policy-free runs: SMC from socket() on
static int policy_free(void) { return !cfg.n_include && !cfg.n_exclude; }

// A TCP socket() call answered with an SMC socket of the same type; -1 (errno kept) when the kernel
// has none: the caller makes the TCP socket then.
static int smc_at_socket(int v6, int type) {
  int saved_errno = errno, kind = 0, unsupported;
  int fd = make_smc(v6, type, &kind, &unsupported);
  if (fd < 0) {
    if (unsupported) notice_no_smc(v6, errno);
    else debugf("socket: SMC socket failed, plain TCP: %s", strerror(errno));
    errno = saved_errno;
    return -1;
  }
  // -t/-r: the program has set nothing yet; a size it sets later replaces these
  for (int snd = 0; snd < 2; snd++) {
    long want = snd ? cfg.sndbuf : cfg.rcvbuf;
    int val = (int)want;
    if (want < 0) continue;
    if (real_setsockopt(fd, SOL_SOCKET, snd ? SO_SNDBUF : SO_RCVBUF, &val, sizeof val) < 0) {
      debugf("socket: the SMC socket refused %s %ld (%s): plain TCP", snd ? "sndbuf" : "rcvbuf", want, strerror(errno));
      close(fd);
      errno = saved_errno;
      return -1;
    }
    report_size(fd, snd, want);
  }
  struct known *k = known_slot(fd, 1);
  if (k) {
    k->cookie = 0;
    k->set = 0;
    k->bound = 0;
    k->epoch = __atomic_load_n(&epoch, __ATOMIC_ACQUIRE);
    k->made = (uint8_t)(kind + 1);
  }
  errno = saved_errno;
  return fd;
}

// fd's record when socket() made it SMC. No syscall: a record outliving its socket (fd closed and its
// number reused behind our back) only makes the library leave that fd alone, as if it were not TCP; its
// options (set) count only in its epoch, as every record's.
static struct known *made_smc(int fd) {
  struct known *k = known_slot(fd, 0);
  return k && k->made ? k : NULL;
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

static int retry_over_tcp(int fd, int v6, const struct saved *s, const struct sockaddr *addr, socklen_t len, const struct where *w, int err) {
  int ns = real_socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int failed = ns < 0 || apply_options(ns, s, 0) < 0;
  if (failed && ns >= 0) close(ns);
  if (failed || swap_in(fd, ns, s) < 0) {   // swap_in closes ns either way
    debugf("connect %s:%d: SMC handshake failed (%s), TCP retry impossible: %s", w->text, w->port, errname(err), strerror(errno));
    errno = err;
    return -1;
  }
  // the SMC socket held the address until swap_in closed it
  if (s->bound && real_bind(fd, (const struct sockaddr *)&s->local, s->local_len) < 0) { errno = err; return -1; }
  debugf("connect %s:%d: SMC handshake failed (%s); retrying over plain TCP on fd %d", w->text, w->port, errname(err), fd);
  notice_once(&noticed_retry, "tcp-retry",
              "an SMC handshake failed under load and the connection was retried over plain TCP; on the server: a listen backlog above "
              "the burst size (listen(fd, 4096); net.core.somaxconn caps it), and net.smc.limit_smc_hs=1; see: smc-run doctor");
  errno = 0;
  return real_connect(fd, addr, len);
}

// ---- the interposed calls
API int socket(int domain, int type, int protocol) {
  ensure_init();
  int tcp = !cfg.disabled && (domain == AF_INET || domain == AF_INET6) && (type & 0xf) == SOCK_STREAM &&
            (protocol == 0 || protocol == IPPROTO_TCP);
  if (tcp && policy_free()) {
    int fd = smc_at_socket(domain == AF_INET6, type);
    if (fd >= 0) return fd;
  }
  int fd = real_socket(domain, type, protocol);
  if (fd >= 0 && tcp && !policy_free()) {
    int saved_errno = errno;
    remember(fd);
    errno = saved_errno;
  }
  return fd;
}

API int bind(int fd, const struct sockaddr *addr, socklen_t len) {
  ensure_init();
  int rc = real_bind(fd, addr, len);
  struct known *k;
  if (rc == 0 && !cfg.disabled && (k = made_smc(fd))) k->bound = 1;   // the TCP retry binds its socket there too
  return rc;
}

API int setsockopt(int fd, int level, int name, const void *val, socklen_t len) {
  ensure_init();
  if (!cfg.disabled) {
    int saved_errno = errno;
    note_option(fd, level, name);
    errno = saved_errno;
  }
  return real_setsockopt(fd, level, name, val, len);
}

// connect() on a socket socket() made SMC: the call itself, and the TCP retry when its handshake failed.
static int connect_made(int fd, const struct sockaddr *addr, socklen_t len, const struct known *k) {
  int saved_errno = errno;
  struct where w;
  int have_where = read_where(addr, len, &w) == 0;
  const char *kind;
  if (cfg.debug && have_where && (kind = made_kind(fd, k))) debugf("connect %s:%d on %s fd %d", w.text, w.port, kind, fd);
  errno = saved_errno;
  int rc = real_connect(fd, addr, len);
  if (!cfg.tcp_retry || !have_where || (rc == 0 && !cfg.test_mode)) return rc;
  int err = rc < 0 ? errno : 0;
  struct saved s;
  s.set = k->epoch == __atomic_load_n(&epoch, __ATOMIC_ACQUIRE) ? __atomic_load_n(&k->set, __ATOMIC_RELAXED) : ALL_OPTS;
  int v6 = addr->sa_family == AF_INET6;
  // as in connect(): blocking connects only; and only a socket that still is the one socket() made
  if (!made_kind(fd, k)) { errno = err; return rc; }
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || (fl & O_NONBLOCK)) { errno = err; return rc; }
  if (cfg.test_mode) {
    if (!cfg.test_fault) { errno = err; return rc; }
    err = err ? err : cfg.test_fault;   // TEST ONLY: as in connect()
  } else if (!smc_handshake_failed(fd, err)) {
    errno = err;
    return rc;
  }
  save_options(fd, v6, &s);
  s.local_len = sizeof s.local;
  s.bound = k->bound && getsockname(fd, (struct sockaddr *)&s.local, &s.local_len) == 0;
  return retry_over_tcp(fd, v6, &s, addr, len, &w, err);
}

API int connect(int fd, const struct sockaddr *addr, socklen_t len) {
  ensure_init();
  if (cfg.disabled || !addr || (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)) return real_connect(fd, addr, len);
  const struct known *made = made_smc(fd);
  if (made) return connect_made(fd, addr, len, made);
  int saved_errno = errno, v6 = 0;
  struct saved s;
  struct where w;
  if (!fresh_tcp(fd, &s, &v6) || read_where(addr, len, &w) < 0 || (addr->sa_family == AF_INET6) != v6) {
    errno = saved_errno;
    return real_connect(fd, addr, len);
  }
  if (!wants_smc(&w)) {
    debugf("connect %s:%d excluded by policy: plain TCP", w.text, w.port);
    errno = saved_errno;
    return real_connect(fd, addr, len);
  }
  int smc = become_smc(fd, v6, &s, "connect", &w) == 0;
  errno = saved_errno;
  int rc = real_connect(fd, addr, len);
  // Blocking connects only. A non-blocking one fails later, seen through poll/epoll and SO_ERROR: a
  // retry then would need the program's epoll registrations (dup3 drops the old file from every epoll
  // set), i.e. interposing epoll_ctl/epoll_wait/poll/select/getsockopt and io_uring, which libc never sees.
  if (!smc || s.nonblock || !cfg.tcp_retry) return rc;
  int err = rc < 0 ? errno : 0;
  if (cfg.test_mode) {
    if (!cfg.test_fault) return rc;
    err = err ? err : cfg.test_fault;   // TEST ONLY: this completion counts as a failed SMC handshake
  } else if (rc == 0 || !smc_handshake_failed(fd, err)) {
    return rc;
  }
  return retry_over_tcp(fd, v6, &s, addr, len, &w, err);
}

API int listen(int fd, int backlog) {
  ensure_init();
  if (cfg.disabled) return real_listen(fd, backlog);
  int saved_errno = errno, v6 = 0;
  struct saved s;
  struct where w;
  const struct known *made = made_smc(fd);
  if (made) {
    const char *kind;
    s.local_len = sizeof s.local;
    if (cfg.debug && (kind = made_kind(fd, made)) && getsockname(fd, (struct sockaddr *)&s.local, &s.local_len) == 0 &&
        read_where((struct sockaddr *)&s.local, s.local_len, &w) == 0)
      debugf("listen %s:%d on %s fd %d", w.text, w.port, kind, fd);
    errno = saved_errno;
    return real_listen(fd, backlog);
  }
  if (fresh_tcp(fd, &s, &v6) && read_where((struct sockaddr *)&s.local, s.local_len, &w) == 0) {
    if (wants_smc(&w)) become_smc(fd, v6, &s, "listen", &w);
    else debugf("listen %s:%d excluded by policy: plain TCP", w.text, w.port);
  }
  errno = saved_errno;
  return real_listen(fd, backlog);
}
