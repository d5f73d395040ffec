// Kernel ABI numbers used by smc-run (include/uapi/linux/smc.h, socket.h, in.h, tcp.h).
export const AF_INET = 2;
export const AF_INET6 = 10;
export const AF_SMC = 43;
export const SMCPROTO_SMC = 0; // AF_SMC socket for IPv4 peers
export const SMCPROTO_SMC6 = 1; // AF_SMC socket for IPv6 peers
export const IPPROTO_TCP = 6;
export const IPPROTO_IPV6 = 41;
export const IPV6_V6ONLY = 26;
export const IPPROTO_SMC = 256; // since 6.11: SMC with an inet family
export const SOL_SOCKET = 1;
export const SO_SNDBUF = 7;
export const SO_RCVBUF = 8;
export const SO_KEEPALIVE = 9;
export const SO_PROTOCOL = 38;
export const SO_DOMAIN = 39;
/** u64 in host order, Linux 5.14+: a network namespace's id, never reused */
export const SO_NETNS_COOKIE = 71;
export const TCP_NODELAY = 1;
export const TCP_CORK = 3;
export const TCP_KEEPIDLE = 4;
export const TCP_KEEPINTVL = 5;
export const TCP_KEEPCNT = 6;
export const TCP_INFO = 11;
/** tcpi_state of a closed TCP socket (TCP_CLOSE in include/net/tcp_states.h) */
export const TCP_STATE_CLOSE = 7;
export const SOL_SMC = 286;
export const SMC_LIMIT_HS = 1;
export const NETLINK_ROUTE = 0;
export const NETLINK_SOCK_DIAG = 4;
export const NETLINK_GENERIC = 16;
