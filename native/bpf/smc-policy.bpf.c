// smc-policy.bpf.c: destination policy of `smc-run enable --include/--exclude`, in the kernel (Linux 6.19+).
// SMC proposes itself in the TCP handshake: the client's SYN carries the SMC option, the server's SYN-ACK
// echoes it. The kernel asks a BPF handshake controller (struct_ops smc_hs_ctrl, chosen per network
// namespace by net.smc.hs_ctrl) before it writes that option: syn_option for a connecting SMC socket,
// synack_option for each connection an SMC listener answers. Returning 0 leaves the option out, and the
// connection goes on as plain TCP without SMC's CLC exchange (both ends see "peer has no SMC").
// The rules of a namespace (keyed by its cookie, as the switch's map) match the other end's address and
// the service's port: the destination port for a client, the listener's own port for a server.
// Built by native/bpf/build.sh beside smc-switch.bpf.c; loaded by native/bpf/smc-bpf.c only on kernels
// that have struct smc_hs_ctrl. Layouts are relocated against the running kernel's BTF (CO-RE).
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include "cgroup-scope.bpf.h"

#define AF_INET 2
#define AF_INET6 10
#define SMC_POLICY_RULES 16 // src/bpf/policy.ts: POLICY_RULES

// only the fields read here; preserve_access_index makes every access a CO-RE relocation
struct net {
	__u64 net_cookie;
} __attribute__((preserve_access_index));

typedef struct {
	struct net *net;
} possible_net_t;

struct in6_addr {
	union {
		__u32 u6_addr32[4];
	} in6_u;
} __attribute__((preserve_access_index));

struct sock_common {
	__u32 skc_daddr;
	__u16 skc_dport;
	__u16 skc_num;
	unsigned short skc_family;
	possible_net_t skc_net;
	struct in6_addr skc_v6_daddr;
} __attribute__((preserve_access_index));

struct sock_cgroup_data {
	struct cgroup *cgroup; // the cgroup v2 directory of the task that created the socket
} __attribute__((preserve_access_index));

struct sock {
	struct sock_common __sk_common;
	struct sock_cgroup_data sk_cgrp_data;
} __attribute__((preserve_access_index));

struct inet_sock {
	struct sock sk;
} __attribute__((preserve_access_index));

struct inet_connection_sock {
	struct inet_sock icsk_inet;
} __attribute__((preserve_access_index));

struct tcp_sock {
	struct inet_connection_sock inet_conn;
} __attribute__((preserve_access_index));

struct request_sock {
	struct sock_common __req_common;
} __attribute__((preserve_access_index));

struct inet_request_sock {
	struct request_sock req;
} __attribute__((preserve_access_index));

// the kernel's struct_ops type (include/net/smc.h); libbpf matches the members by name
struct smc_hs_ctrl {
	char name[16];
	int flags;
	int (*syn_option)(struct tcp_sock *tp);
	int (*synack_option)(const struct tcp_sock *tp, struct inet_request_sock *ireq);
};

// One rule, as src/bpf/policy.ts encodes it: addresses in network order, the rest in the host's.
struct smc_rule {
	__u32 addr[4];   // IPv4 in addr[0]
	__u8 family;     // 0: any address; 4; 6
	__u8 prefix;     // bits of addr that must match
	__u8 has_port;
	__u8 reserved;
	__u16 port;
	__u16 reserved2;
};

struct smc_policy {
	__u32 n_include; // rules[0, n_include) include, the next n_exclude exclude
	__u32 n_exclude;
	__u64 proposed;  // connections the policy let propose SMC
	__u64 held;      // connections it kept on plain TCP
	struct smc_rule rules[SMC_POLICY_RULES];
};
_Static_assert(sizeof(struct smc_policy) == 408, "src/bpf/policy.ts: POLICY_SIZE");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64); // network namespace cookie
	__type(value, struct smc_policy);
} smc_policy_netns SEC(".maps");

// the rules of cgroup scopes (`smc-run enable --cgroup PATH --include/--exclude`), by cgroup id
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64); // cgroup id
	__type(value, struct smc_policy);
} smc_policy_cgroup SEC(".maps");

/**
 * The rules for a connection of socket own: a socket of an enabled cgroup has its cgroup's (none when it
 * was enabled without rules), the others their namespace's; NULL: no rules, SMC is proposed. The scope
 * is the switch's (native/bpf/smc-switch.bpf.c), from the one map of enabled cgroups.
 */
static __always_inline struct smc_policy *policy_of(const struct sock *own)
{
	// without CONFIG_SOCK_CGROUP_DATA sockets keep no cgroup: the loader refuses cgroup rules there
	if (bpf_core_field_exists(own->sk_cgrp_data.cgroup)) {
		__u64 id;
		struct smc_switch_cg *cg = scope_cgroup(own->sk_cgrp_data.cgroup, &id);
		if (cg)
			return cg->flags & SCOPE_POLICY ? bpf_map_lookup_elem(&smc_policy_cgroup, &id) : (void *)0;
	}
	__u64 cookie = own->__sk_common.skc_net.net->net_cookie;
	return bpf_map_lookup_elem(&smc_policy_netns, &cookie);
}

static __always_inline int rule_matches(const struct smc_rule *r, int family, const __u32 *addr, __u16 port)
{
	if (r->has_port && r->port != port)
		return 0;
	if (r->family == 0)
		return 1;
	if (r->family != family)
		return 0;
	for (int i = 0; i < 4; i++) {
		int bits = (int)r->prefix - 32 * i;
		if (bits <= 0)
			break;
		__u32 mask = bits >= 32 ? 0xffffffffu : bpf_htonl(~0u << (32 - bits));
		if ((addr[i] ^ r->addr[i]) & mask)
			return 0;
	}
	return 1;
}

/** The other end's address: 4 or 6 (an IPv4-mapped IPv6 address counts as IPv4), 0 for another family. */
static __always_inline int peer_address(const struct sock_common *c, __u32 *addr)
{
	unsigned short family = c->skc_family;
	if (family == AF_INET) {
		addr[0] = c->skc_daddr;
		return 4;
	}
	if (family != AF_INET6)
		return 0;
	for (int i = 0; i < 4; i++)
		addr[i] = c->skc_v6_daddr.in6_u.u6_addr32[i];
	if (addr[0] == 0 && addr[1] == 0 && addr[2] == bpf_htonl(0xffff)) {
		addr[0] = addr[3];
		return 4;
	}
	return 6;
}

/** 1: propose SMC; 0: plain TCP. An exclude rule wins; with include rules only a match proposes SMC. */
static __always_inline int decide(const struct sock *own, const struct sock_common *peer, __u16 port)
{
	struct smc_policy *p = policy_of(own);
	if (!p)
		return 1;
	__u32 addr[4] = {0};
	int family = peer_address(peer, addr);
	__u32 n = p->n_include + p->n_exclude;
	int smc = p->n_include == 0;
	for (int i = 0; i < SMC_POLICY_RULES; i++) {
		if (i >= n)
			break;
		if (!rule_matches(&p->rules[i], family, addr, port))
			continue;
		if (i >= p->n_include) {
			smc = 0;
			break;
		}
		smc = 1;
	}
	__sync_fetch_and_add(smc ? &p->proposed : &p->held, 1);
	return smc;
}

SEC("struct_ops/syn_option")
int BPF_PROG(smc_run_syn, struct tcp_sock *tp)
{
	const struct sock *sk = &tp->inet_conn.icsk_inet.sk;
	return decide(sk, &sk->__sk_common, bpf_ntohs(sk->__sk_common.skc_dport));
}

SEC("struct_ops/synack_option")
int BPF_PROG(smc_run_synack, const struct tcp_sock *tp, struct inet_request_sock *ireq)
{
	const struct sock_common *req = &ireq->req.__req_common;
	return decide(&tp->inet_conn.icsk_inet.sk, req, req->skc_num);
}

// net.smc.hs_ctrl names it: "smc_run" (src/bpf/switch.ts: HS_CTRL_NAME)
SEC(".struct_ops")
struct smc_hs_ctrl smc_run_hs = {
	.name = "smc_run",
	.syn_option = (void *)smc_run_syn,
	.synack_option = (void *)smc_run_synack,
};

char LICENSE[] SEC("license") = "Dual MIT/GPL";
