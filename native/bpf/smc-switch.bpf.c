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

#define AF_INET 2
#define AF_INET6 10
#define SOCK_STREAM 1
#define SOCK_TYPE_MASK 0xf // the hook sees the type as socket() got it: SOCK_NONBLOCK/SOCK_CLOEXEC (libuv sets both) still in it
#define IPPROTO_TCP 6
#define IPPROTO_SMC 256

// only the fields read here; preserve_access_index makes every access a CO-RE relocation
struct net {
	__u64 net_cookie;
} __attribute__((preserve_access_index));

struct nsproxy {
	struct net *net_ns;
} __attribute__((preserve_access_index));

struct task_struct {
	struct nsproxy *nsproxy;
} __attribute__((preserve_access_index));

// what `smc-run status` reads back: the namespace's inode (for people) and the sockets switched so far
struct smc_switch_ns {
	__u64 switched;
	__u32 inode;
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64); // network namespace cookie
	__type(value, struct smc_switch_ns);
} smc_switch_netns SEC(".maps");

// cgroup scope (`smc-run enable --cgroup PATH`): sockets created by tasks in that cgroup or below it,
// in whatever namespace they run. Keyed by cgroup id (the cgroup v2 directory's file handle).
struct smc_switch_cg {
	__u64 switched;
	__u64 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64); // cgroup id
	__type(value, struct smc_switch_cg);
} smc_switch_cgroup SEC(".maps");

// how many cgroups the loader put in smc_switch_cgroup: 0 skips the walk up the task's cgroups
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} smc_switch_cgroups SEC(".maps");

#define CGROUP_LEVELS 16 // deeper cgroups are matched by their 16 upper levels only

SEC("fmod_ret/update_socket_protocol")
int smc_switch(__u64 *ctx)
{
	int family = (int)ctx[0], type = (int)ctx[1], protocol = (int)ctx[2];

	if (family != AF_INET && family != AF_INET6)
		return protocol;
	if ((type & SOCK_TYPE_MASK) != SOCK_STREAM || (protocol != 0 && protocol != IPPROTO_TCP))
		return protocol;
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 cookie = task->nsproxy->net_ns->net_cookie;
	struct smc_switch_ns *ns = bpf_map_lookup_elem(&smc_switch_netns, &cookie);
	if (ns) {
		__sync_fetch_and_add(&ns->switched, 1);
		return IPPROTO_SMC;
	}
	__u32 zero = 0, *n = bpf_map_lookup_elem(&smc_switch_cgroups, &zero);
	if (!n || !*n)
		return protocol;
	// level 0 is the root; the task's own cgroup is the deepest level that answers
	for (int level = 1; level <= CGROUP_LEVELS; level++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(level);
		if (!id)
			break;
		struct smc_switch_cg *cg = bpf_map_lookup_elem(&smc_switch_cgroup, &id);
		if (cg) {
			__sync_fetch_and_add(&cg->switched, 1);
			return IPPROTO_SMC;
		}
	}
	return protocol;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
