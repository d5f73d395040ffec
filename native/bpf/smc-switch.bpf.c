// smc-switch.bpf.c: the BPF switch of `smc-run enable`. At socket() the kernel asks
// update_socket_protocol(family, type, protocol) which protocol a user's socket gets (an fmod_ret hook
// since Linux 6.6, made for mptcpize); for a TCP stream socket created in a network namespace listed in
// the map, this program answers IPPROTO_SMC (Linux 6.11+), so the program that called socket() gets an
// SMC socket without knowing: any program, libc or not, running already or not (new sockets only).
// Namespaces are keyed by their cookie (SO_NETNS_COOKIE): unlike an inode number a cookie is never
// reused, so an entry left behind by a namespace that is gone can never switch a new one.
// Built by native/bpf/build.sh (clang -target bpfel/bpfeb, CO-RE: the struct layouts below are
// relocated against the running kernel's BTF at load time); loaded by native/bpf/smc-bpf.c.
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "cgroup-scope.bpf.h"

#define AF_INET 2
#define AF_INET6 10
#define SOCK_STREAM 1
#define SOCK_TYPE_MASK 0xf // the hook sees the type as socket() got it: SOCK_NONBLOCK/SOCK_CLOEXEC (libuv sets both) still in it
#define IPPROTO_TCP 6
#define IPPROTO_SMC 256

// only the fields read here; preserve_access_index makes every access a CO-RE relocation
struct smc_hs_ctrl {
	char name[16];
} __attribute__((preserve_access_index));

struct netns_smc {
	struct smc_hs_ctrl *hs_ctrl; // Linux 6.19+ (CONFIG_SMC_HS_CTRL_BPF): net.smc.hs_ctrl
} __attribute__((preserve_access_index));

struct net {
	__u64 net_cookie;
	struct netns_smc smc;
} __attribute__((preserve_access_index));

struct nsproxy {
	struct net *net_ns;
} __attribute__((preserve_access_index));

struct css_set {
	struct cgroup *dfl_cgrp; // the task's cgroup v2 directory
} __attribute__((preserve_access_index));

struct task_struct {
	struct nsproxy *nsproxy;
	struct css_set *cgroups;
} __attribute__((preserve_access_index));

// what `smc-run status` reads back: the namespace's inode (for people) and the sockets switched so far
struct smc_switch_ns {
	__u64 switched;
	__u32 inode;
	__u32 flags;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64); // network namespace cookie
	__type(value, struct smc_switch_ns);
} smc_switch_netns SEC(".maps");

// cgroup scope (`smc-run enable --cgroup PATH`): sockets created by tasks in that cgroup or below it,
// in whatever namespace they run: smc_switch_cgroup in cgroup-scope.bpf.h, keyed by cgroup id (the
// cgroup v2 directory's file handle)

// how many cgroups the loader put in smc_switch_cgroup: 0 skips the walk up the task's cgroups
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} smc_switch_cgroups SEC(".maps");

#define HS_CTRL_NAME "smc_run" // src/bpf/switch.ts: HS_CTRL_NAME

/**
 * Whether net.smc.hs_ctrl of the namespace names smc-run's destination policy. A scope with rules is
 * switched only there: elsewhere the kernel would never ask the policy, and a connection it excludes
 * would go SMC. Plain TCP is what the program would have had without smc-run.
 */
static __always_inline int policy_chosen(struct net *net)
{
	if (!bpf_core_field_exists(net->smc.hs_ctrl))
		return 0;
	struct smc_hs_ctrl *c = net->smc.hs_ctrl;
	if (!c)
		return 0;
	for (int i = 0; i < sizeof(HS_CTRL_NAME); i++)
		if (c->name[i] != HS_CTRL_NAME[i])
			return 0;
	return 1;
}

SEC("fmod_ret/update_socket_protocol")
int smc_switch(__u64 *ctx)
{
	int family = (int)ctx[0], type = (int)ctx[1], protocol = (int)ctx[2];

	if (family != AF_INET && family != AF_INET6)
		return protocol;
	if ((type & SOCK_TYPE_MASK) != SOCK_STREAM || (protocol != 0 && protocol != IPPROTO_TCP))
		return protocol;
	struct task_struct *task = bpf_get_current_task_btf();
	struct net *net = task->nsproxy->net_ns;
	// the cgroup scope first, as the policy decides: a socket of an enabled cgroup is that cgroup's (its
	// rules, its count) in whatever namespace; the walk only while some cgroup is enabled
	__u32 zero = 0, *n = bpf_map_lookup_elem(&smc_switch_cgroups, &zero);
	__u64 id;
	// (a kernel without CONFIG_CGROUPS has no task->cgroups: the walk is left out when the program loads)
	struct smc_switch_cg *cg = n && *n && bpf_core_field_exists(task->cgroups) ? scope_cgroup(task->cgroups->dfl_cgrp, &id) : 0;
	if (cg) {
		if ((cg->flags & SCOPE_POLICY) && !policy_chosen(net))
			return protocol;
		__sync_fetch_and_add(&cg->switched, 1);
		return IPPROTO_SMC;
	}
	__u64 cookie = net->net_cookie;
	struct smc_switch_ns *ns = bpf_map_lookup_elem(&smc_switch_netns, &cookie);
	if (!ns || ((ns->flags & SCOPE_POLICY) && !policy_chosen(net)))
		return protocol;
	__sync_fetch_and_add(&ns->switched, 1);
	return IPPROTO_SMC;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
