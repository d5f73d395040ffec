// conn-loop: N sequential connections to an smc-bench server (protocol OP_CONN: an 8-byte header, one
// byte back, close), as a C program opens them: socket, setsockopt (SO_RCVTIMEO, TCP_NODELAY), connect,
// write, read, close. The unit of bench/preload/instructions.cjs.
//   conn-loop PORT N
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: conn-loop PORT N\n"); return 2; }
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1])), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  int n = atoi(argv[2]), one = 1;
  struct timeval tv = {5, 0};
  for (int i = 0; i < n; i++) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    uint32_t hdr[2] = {htonl(3), htonl(1)};
    char b;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 || write(fd, hdr, sizeof hdr) != sizeof hdr || read(fd, &b, 1) != 1) {
      perror("conn-loop");
      return 1;
    }
    close(fd);
  }
  return 0;
}
