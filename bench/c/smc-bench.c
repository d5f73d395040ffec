// smc-bench: the C reference for bench/smcd (same protocol as bench/smcd/node-bench.cjs), so that
// "Node over SMC-D" can be set against "a plain C program on the same kernel path".
//
//   smc-bench server [-f inet|smc] [-b BYTES]
//       listens on 127.0.0.1 (ephemeral port), prints {"port":N} and serves connections one after another
//   smc-bench client -p PORT -m bulk|pp|conn -s SIZE [-f inet|smc] [-b BYTES] [-d SECS] [-w SECS]
//       prints one JSON line with the result
//   smc-bench quit -p PORT [-f ...]      tells the server to exit
//
// -f smc creates AF_SMC sockets (the kernel's SMC over the TCP handshake), -f inet plain TCP.
// -b sets SO_SNDBUF and SO_RCVBUF before connect/listen, as `smc-run -t/-r` does (SMC sizes its buffers
// from them). The protocol: the client sends an 8-byte header (op, size; network order), then
//   bulk: the server write()s SIZE-byte messages until the client closes; the client read()s into a
//         1 MiB buffer and counts bytes after the warm-up (throughput measured at the receiver)
//   pp:   the client sends SIZE bytes, the server echoes them, the client times each round trip
//         (TCP_NODELAY on both ends; SMC honours it)
//   conn: the server answers with 1 byte and closes; the client counts connect+header+reply+close
// Plain POSIX and blocking sockets: this is the simple C program Node is compared with.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_SMC
#define AF_SMC 43
#endif

enum { OP_BULK = 1, OP_ECHO = 2, OP_CONN = 3, OP_QUIT = 4 };
#define READ_BUF (1 << 20)

static int family = AF_INET;
static int bufsize;

static void fail(const char *what)
{
	fprintf(stderr, "smc-bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int new_socket(void)
{
	// AF_SMC with protocol 0 is SMCPROTO_SMC (IPv4), the family smc-run's hook uses for IPv4
	int fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0)
		fail("socket");
	if (bufsize > 0) {
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof bufsize) < 0)
			fail("SO_SNDBUF");
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsize, sizeof bufsize) < 0)
			fail("SO_RCVBUF");
	}
	return fd;
}

static void nodelay(int fd)
{
	int one = 1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
		fail("TCP_NODELAY");
}

// 0 on success, -1 when the peer went away
static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, char *p, size_t n)
{
	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static void serve(int fd, char *buf)
{
	uint32_t hdr[2];
	if (read_all(fd, (char *)hdr, sizeof hdr) < 0)
		return;
	uint32_t op = ntohl(hdr[0]), size = ntohl(hdr[1]);
	if (size == 0 || size > READ_BUF)
		size = 1;
	switch (op) {
	case OP_BULK:
		// one write() per message: the message size is the application's write size
		while (write_all(fd, buf, size) == 0)
			;
		break;
	case OP_ECHO:
		nodelay(fd);
		for (;;) {
			ssize_t r = read(fd, buf, READ_BUF);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0 || write_all(fd, buf, (size_t)r) < 0)
				break;
		}
		break;
	case OP_CONN:
		write_all(fd, buf, 1);
		break;
	case OP_QUIT:
		close(fd);
		exit(0);
	}
}

static __attribute__((noreturn)) void server(void)
{
	int ls = new_socket(), one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof a;
	if (bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 128) < 0 ||
	    getsockname(ls, (struct sockaddr *)&a, &alen) < 0)
		fail("listen");
	printf("{\"port\":%d}\n", ntohs(a.sin_port));
	fflush(stdout);
	char *buf = malloc(READ_BUF);
	if (!buf)
		fail("malloc");
	memset(buf, 0x5a, READ_BUF);
	for (;;) {
		int fd = accept(ls, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			fail("accept");
		}
		serve(fd, buf);
		close(fd);
	}
}

static int connect_to(int port, uint32_t op, uint32_t size)
{
	int fd = new_socket();
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
		fail("connect");
	if (op == OP_ECHO)
		nodelay(fd);
	uint32_t hdr[2] = { htonl(op), htonl(size) };
	if (write_all(fd, (const char *)hdr, sizeof hdr) < 0)
		fail("write header");
	return fd;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

// nearest rank, as bench/lib/stats.cjs percentile()
static double pct(const double *sorted, size_t n, double p)
{
	if (n == 0)
		return 0;
	size_t rank = (size_t)(p / 100 * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: smc-bench server|client|quit [options] (see the header of smc-bench.c)\n");
		return 2;
	}
	const char *role = argv[1], *mode = "bulk";
	int port = 0;
	uint32_t size = 1;
	double dur = 2, warm = 0.5;
	int o;
	optind = 2;
	while ((o = getopt(argc, argv, "f:b:p:m:s:d:w:")) != -1) {
		switch (o) {
		case 'f': family = strcmp(optarg, "smc") == 0 ? AF_SMC : AF_INET; break;
		case 'b': bufsize = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 's': size = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'd': dur = atof(optarg); break;
		case 'w': warm = atof(optarg); break;
		default: return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(role, "server") == 0)
		server();
	if (strcmp(role, "quit") == 0) {
		close(connect_to(port, OP_QUIT, 1));
		return 0;
	}
	if (size == 0 || size > READ_BUF) {
		fprintf(stderr, "smc-bench: size must be 1..%d\n", READ_BUF);
		return 2;
	}
	char *buf = malloc(READ_BUF);
	if (!buf)
		fail("malloc");
	memset(buf, 0x5a, READ_BUF);
	if (strcmp(mode, "bulk") == 0) {
		int fd = connect_to(port, OP_BULK, size);
		double t0 = now(), start = 0, t = t0;
		unsigned long long bytes = 0;
		for (;;) {
			ssize_t r = read(fd, buf, READ_BUF);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				fail("read");
			t = now();
			if (start == 0) {
				if (t - t0 >= warm)
					start = t;
				continue;
			}
			bytes += (unsigned long long)r;
			if (t - start >= dur)
				break;
		}
		close(fd);
		printf("{\"mode\":\"bulk\",\"size\":%u,\"bytes\":%llu,\"secs\":%.6f,\"MBps\":%.3f}\n", size, bytes,
		       t - start, (double)bytes / 1e6 / (t - start));
	} else if (strcmp(mode, "pp") == 0) {
		int fd = connect_to(port, OP_ECHO, size);
		size_t cap = 1 << 16, n = 0;
		double *rtt = malloc(cap * sizeof *rtt);
		double t0 = now(), start = 0, t = t0;
		for (;;) {
			double s = now();
			if (write_all(fd, buf, size) < 0 || read_all(fd, buf, size) < 0)
				fail("ping-pong");
			t = now();
			if (start == 0) {
				if (t - t0 >= warm)
					start = t;
				continue;
			}
			if (n == cap) {
				cap *= 2;
				rtt = realloc(rtt, cap * sizeof *rtt);
				if (!rtt)
					fail("realloc");
			}
			rtt[n++] = (t - s) * 1e6;
			if (t - start >= dur)
				break;
		}
		close(fd);
		qsort(rtt, n, sizeof *rtt, cmp_double);
		printf("{\"mode\":\"pp\",\"size\":%u,\"n\":%zu,\"secs\":%.6f,\"p50us\":%.2f,\"p99us\":%.2f}\n", size, n,
		       t - start, pct(rtt, n, 50), pct(rtt, n, 99));
	} else if (strcmp(mode, "conn") == 0) {
		double t0 = now(), start = 0, t = t0;
		unsigned long n = 0, total = 0;
		for (;;) {
			int fd = connect_to(port, OP_CONN, 1);
			if (read_all(fd, buf, 1) < 0)
				fail("conn reply");
			close(fd);
			total++;
			t = now();
			if (start == 0) {
				if (t - t0 >= warm)
					start = t;
				continue;
			}
			n++;
			if (t - start >= dur)
				break;
		}
		printf("{\"mode\":\"conn\",\"n\":%lu,\"connections\":%lu,\"secs\":%.6f,\"perSec\":%.2f}\n", n, total,
		       t - start, (double)n / (t - start));
	} else {
		fprintf(stderr, "smc-bench: unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
