// socket-loop N: socket(AF_INET, SOCK_STREAM) and close() N times; prints {"n":N,"ns":T} with T the
// CLOCK_MONOTONIC time the loop took (in an icount guest: one ns per guest instruction). What the BPF
// switch's hook costs per socket() shows as the difference between runs of this loop (bench/smcd/cgroup-check.cjs).
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0) {
			perror("socket");
			return 1;
		}
		close(fd);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("{\"n\":%ld,\"ns\":%lld}\n", n, (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
	return 0;
}
