// cgroup-scope.bpf.h: the cgroup scope (`smc-run enable --cgroup PATH`), shared by the switch (it asks
// with the cgroup of the task calling socket()) and the destination policy (it asks with the socket's
// cgroup, which the kernel took from that same task when it made the socket). Both programs hold the one
// map of enabled cgroups (the loader pins it once and hands it to both), so both take the same scope:
// the nearest enabled cgroup, the socket's own or an ancestor's. The walk loads the kernel's pointers
// directly (BTF-typed loads: one instruction each, a fault reads 0), not through bpf_probe_read_kernel,
// which cost about 400 instructions a level here (bench/REPORT.md, cgroup check); it runs for every TCP
// socket() of the host while any cgroup is enabled.
#ifndef SMC_RUN_CGROUP_SCOPE_BPF_H
#define SMC_RUN_CGROUP_SCOPE_BPF_H

// only the fields read here; preserve_access_index makes every access a CO-RE relocation
struct kernfs_node {
	__u64 id; // the cgroup id: the directory's file handle, as name_to_handle_at gives it to the loader
} __attribute__((preserve_access_index));

struct cgroup_subsys_state {
	struct cgroup *cgroup; // for a cgroup's own css (its self), that cgroup
	struct cgroup_subsys_state *parent;
} __attribute__((preserve_access_index));

struct cgroup {
	struct cgroup_subsys_state self;
	struct kernfs_node *kn;
} __attribute__((preserve_access_index));

// flags of a scope (namespace or cgroup): SCOPE_POLICY, its destination policy is in the kernel
// (native/bpf/smc-policy.bpf.c), which the kernel asks only in namespaces whose net.smc.hs_ctrl names it
#define SCOPE_POLICY 1

// an enabled cgroup: keyed by its id; what `smc-run status` reads back
struct smc_switch_cg {
	__u64 switched;
	__u32 flags;
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64); // cgroup id
	__type(value, struct smc_switch_cg);
} smc_switch_cgroup SEC(".maps");

#define CGROUP_LEVELS 16 // a cgroup deeper than 16 levels below an enabled one is not matched by it

/** The enabled cgroup nearest to cgrp (itself, or up to CGROUP_LEVELS up): its entry, its id in *id; NULL: none. */
static __always_inline struct smc_switch_cg *scope_cgroup(struct cgroup *cgrp, __u64 *id)
{
	for (int i = 0; i < CGROUP_LEVELS && cgrp; i++) {
		*id = cgrp->kn->id;
		struct smc_switch_cg *v = bpf_map_lookup_elem(&smc_switch_cgroup, id);
		if (v)
			return v;
		struct cgroup_subsys_state *parent = cgrp->self.parent;
		if (!parent)
			break; // the root
		cgrp = parent->cgroup;
	}
	return (void *)0;
}

#endif
