// smc-bpf: the syscall half of `smc-run enable | disable | status` (the BPF switch, native/bpf/smc-switch.bpf.c).
// It loads and pins the program through libbpf (linked in statically, the BPF object embedded: nothing
// to install or compile on the user's machine) and edits its map of switched network namespaces. Policy,
// messages and the command line are the TypeScript CLI's (src/bpf/, src/cli/switch.ts); this program
// prints one JSON object on stdout, or one line "CODE message" on stderr and exits 1.
//
//   smc-bpf probe             what this kernel allows: {"btf":..,"hook":..,"hsCtrl":..,"loaded":..,
//                             "objects":..} (objects: the embedded BPF objects open in this loader)
//   smc-bpf enable NETNS [POLICY]  switch the namespace at NETNS (a path; the CLI passes /proc/self/fd/3);
//                             POLICY (hex, src/bpf/policy.ts) also sets its destination policy (6.19+),
//                             none clears one set before
//   smc-bpf disable NETNS     stop switching it; the last one out unpins the program ("cookie:N": the
//                             entry of namespace cookie N, which may be gone)
//   smc-bpf disable-all       unpin everything
//   smc-bpf status            the namespaces switched: cookie, inode, sockets switched so far, policy;
//                             the cgroups: id, path (or removed), sockets switched, policy
//   smc-bpf enable-cgroup DIR [POLICY]  switch the tasks of cgroup v2 directory DIR and below it
//   smc-bpf disable-cgroup DIR          stop switching them ("id:N": the entry of cgroup id N)
//
// The two BPF objects are compiled for this loader's byte order (native/bpf/build.sh) and embedded as
// they are (.incbin below), opened from memory and found by name: building needs no bpftool that reads
// the other byte order (Debian 12's can't), so the s390x loader is cross-built like the others.
//
// State lives in bpffs under /sys/fs/bpf/smc-run (the link keeps the program attached after this process
// exits); a lock on that directory serialises concurrent commands. The destination policy is a BPF
// handshake controller (native/bpf/smc-policy.bpf.c, struct_ops smc_hs_ctrl) registered as "smc_run" and
// chosen per namespace through net.smc.hs_ctrl; the kernel keeps it registered until it is deleted.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif
#define IPPROTO_SMC_ 256
#define BPF_FS_MAGIC_ 0xcafe4a11

static const char *BPFFS = "/sys/fs/bpf";
static const char *DIR_PIN = "/sys/fs/bpf/smc-run";
static const char *MAP_PIN = "/sys/fs/bpf/smc-run/netns";
static const char *LINK_PIN = "/sys/fs/bpf/smc-run/link";
static const char *POLICY_PIN = "/sys/fs/bpf/smc-run/policy";
static const char *HS_PIN = "/sys/fs/bpf/smc-run/hs_ctrl";
static const char *CG_PIN = "/sys/fs/bpf/smc-run/cgroup";    // the switched cgroups (enable --cgroup)
static const char *CGN_PIN = "/sys/fs/bpf/smc-run/cgroups";  // how many there are (the program's shortcut)
static const char *POLICY_CG_PIN = "/sys/fs/bpf/smc-run/policy_cgroup"; // the cgroups' destination policies
static const char *CGROUP_ROOT = "/sys/fs/cgroup";
static const char *HS_NAME = "smc_run"; // native/bpf/smc-policy.bpf.c's smc_run_hs.name
static const char *HS_SYSCTL = "/proc/sys/net/smc/hs_ctrl";

#define SCOPE_POLICY 1 // native/bpf/smc-switch.bpf.c: the scope's policy is in the kernel

struct ns_value { // native/bpf/smc-switch.bpf.c's struct smc_switch_ns
	unsigned long long switched;
	unsigned int inode;
	unsigned int flags;
};

struct cg_value { // native/bpf/smc-switch.bpf.c's struct smc_switch_cg
	unsigned long long switched;
	unsigned int flags;
	unsigned int reserved;
};

struct policy_value { // native/bpf/smc-policy.bpf.c's struct smc_policy (its rules stay opaque here)
	unsigned int n_include, n_exclude;
	unsigned long long proposed, held;
	unsigned char rules[16 * 24];
};
_Static_assert(sizeof(struct policy_value) == 408, "src/bpf/policy.ts: POLICY_SIZE");

static char libbpf_last[512]; // libbpf's last warning, for the one error line

static int on_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	char text[8192]; // a verifier log comes whole in one message: SMC_RUN_DEBUG shows all of it
	vsnprintf(text, sizeof text, fmt, ap);
	if (getenv("SMC_RUN_DEBUG"))
		fprintf(stderr, "smc-bpf: %s%s", text, text[0] && text[strlen(text) - 1] == '\n' ? "" : "\n");
	text[strcspn(text, "\n")] = 0;
	if (text[0])
		snprintf(libbpf_last, sizeof libbpf_last, "%s", text);
	return 0;
}

static int made_dir; // this command created /sys/fs/bpf/smc-run: a failure removes it again (when empty)
static void (*undo)(void); // what a failure must take back first (a policy set before the switch failed)

__attribute__((noreturn, format(printf, 2, 3))) static void die(const char *code, const char *fmt, ...)
{
	va_list ap;
	void (*u)(void) = undo;
	undo = NULL;
	if (u)
		u();
	if (made_dir)
		rmdir(DIR_PIN);
	fprintf(stderr, "%s ", code);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static const char *errno_code(int e)
{
	switch (e) {
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case EINVAL: return "EINVAL";
	case ENOTSUP: return "ENOTSUP";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case E2BIG: return "E2BIG";
	case ENOMEM: return "ENOMEM";
	default: return "EIO";
	}
}

/** A bpf() failure: permission gets the capability wording, the rest its errno and libbpf's last word. */
__attribute__((noreturn)) static void die_bpf(const char *what, int err)
{
	if ((err == EPERM || err == EACCES) && geteuid() != 0)
		die("EPERM", "%s: not permitted: the BPF switch needs CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN (run as root, e.g. with sudo)", what);
	if (err == EPERM || err == EACCES)
		die("EPERM", "%s: the kernel refused it to root (%s): kernel lockdown, an LSM or the container's policy forbids tracing BPF programs here", what, strerror(err));
	die(errno_code(err), "%s: %s%s%s", what, strerror(err), libbpf_last[0] ? "; libbpf: " : "", libbpf_last);
}

// the objects are found on the assembler's include path (native/bpf/build.sh: -Wa,-I with its work dir)
#define EMBED_OBJECT(sym, file)                                                        \
	__asm__(".pushsection .rodata, \"a\"\n.balign 8\n.globl " #sym "\n" #sym ":\n" \
	        ".incbin \"" file "\"\n.globl " #sym "_end\n" #sym "_end:\n.popsection\n")
EMBED_OBJECT(smc_switch_object, "smc-switch.bpf.o");
EMBED_OBJECT(smc_policy_object, "smc-policy.bpf.o");
extern const char smc_switch_object[], smc_switch_object_end[];
extern const char smc_policy_object[], smc_policy_object_end[];

/** One embedded object, opened (parsed, not yet loaded): NULL with errno when libbpf refuses it. */
static struct bpf_object *open_embedded(const char *name, const char *start, const char *end)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = name);
	struct bpf_object *obj = bpf_object__open_mem(start, (size_t)(end - start), &opts);
	long err = libbpf_get_error(obj);
	if (err) {
		errno = (int)-err;
		return NULL;
	}
	return obj;
}

static struct bpf_object *open_switch(void)
{
	return open_embedded("smc_switch", smc_switch_object, smc_switch_object_end);
}

static struct bpf_object *open_policy(void)
{
	return open_embedded("smc_hs", smc_policy_object, smc_policy_object_end);
}

/** A map of an opened object by its name in native/bpf/smc-*.bpf.c (built from this repo: absent is a bug). */
static struct bpf_map *map_named(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);
	if (!m)
		die_bpf(name, ENOENT);
	return m;
}

struct kernel_facts {
	int btf;     // /sys/kernel/btf/vmlinux: CO-RE can relocate against it
	int hook;    // update_socket_protocol() exists (6.6+)
	int hs_ctrl; // struct smc_hs_ctrl exists (6.19+): per-connection policy in the kernel
	int sock_cgroup; // sockets keep their creator's cgroup (sock_cgroup_data.cgroup: CONFIG_SOCK_CGROUP_DATA)
};

static struct kernel_facts probe_kernel(void)
{
	struct kernel_facts k = {0};
	k.btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	if (!k.btf)
		return k;
	struct btf *vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		return k;
	k.hook = btf__find_by_name_kind(vmlinux, "update_socket_protocol", BTF_KIND_FUNC) > 0;
	k.hs_ctrl = btf__find_by_name_kind(vmlinux, "smc_hs_ctrl", BTF_KIND_STRUCT) > 0;
	int id = btf__find_by_name_kind(vmlinux, "sock_cgroup_data", BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(vmlinux, id) : NULL;
	for (int i = 0; t && i < btf_vlen(t); i++)
		k.sock_cgroup |= !strcmp(btf__name_by_offset(vmlinux, btf_members(t)[i].name_off), "cgroup");
	btf__free(vmlinux);
	return k;
}

static void require_kernel(void)
{
	struct utsname u;
	uname(&u);
	struct kernel_facts k = probe_kernel();
	if (!k.btf)
		die("ENOTSUP", "this kernel (%s) has no BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF): the BPF switch can't load here; start programs with the launcher instead (smc-run PROGRAM)", u.release);
	if (!k.hook)
		die("ENOTSUP", "this kernel (%s) has no update_socket_protocol hook (Linux 6.6+): the BPF switch can't load here; start programs with the launcher instead (smc-run PROGRAM)", u.release);
}

/** A pin of ours: in a pin directory this user alone owns, and not a symlink. */
static int pinned_here(const char *pin)
{
	struct stat d, p;
	return lstat(DIR_PIN, &d) == 0 && S_ISDIR(d.st_mode) && d.st_uid == geteuid() && !(d.st_mode & 022) && lstat(pin, &p) == 0 &&
	       !S_ISLNK(p.st_mode);
}

/** Is bpffs mounted at /sys/fs/bpf? Mounts it when not (a minimal system, a guest): pins need it. */
static void ensure_bpffs(void)
{
	struct statfs s;
	if (statfs(BPFFS, &s) == 0 && (unsigned long)s.f_type == BPF_FS_MAGIC_)
		return;
	if (mount("bpf", BPFFS, "bpf", 0, "mode=0700") != 0)
		die(errno == EPERM ? "EPERM" : errno_code(errno), "no BPF filesystem at %s, and mounting one failed: %s", BPFFS, strerror(errno));
}

/**
 * The pin directory must be this user's own and writable by nobody else: on a bpffs mounted without
 * mode= (1777) another user could make it first, then unpin or replace what smc-run pins there.
 */
static void trust_dir(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		die_bpf("reading /sys/fs/bpf/smc-run", errno);
	if (st.st_uid != geteuid() || (st.st_mode & 022))
		die("EPERM", "%s belongs to uid %u with mode %03o, not to this user alone: someone else may have made it; remove it (rm -r %s) and run again",
		    DIR_PIN, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), DIR_PIN);
}

static int lock_dir(int create)
{
	if (create) {
		ensure_bpffs();
		if (mkdir(DIR_PIN, 0700) == 0)
			made_dir = 1;
		else if (errno != EEXIST)
			die_bpf("creating /sys/fs/bpf/smc-run", errno);
	}
	int fd = open(DIR_PIN, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return -1;
		if (errno == ELOOP || errno == ENOTDIR)
			die("EPERM", "%s is not a directory (a symlink or a file someone else made): remove it (rm %s) and run again", DIR_PIN, DIR_PIN);
		die_bpf("opening /sys/fs/bpf/smc-run", errno);
	}
	trust_dir(fd);
	if (flock(fd, LOCK_EX) != 0)
		die_bpf("locking /sys/fs/bpf/smc-run", errno);
	return fd;
}

struct netns_id {
	unsigned long long cookie;
	unsigned int inode;
};

/** Enters the network namespace at path: the fd to come back with (ns_leave), or -1 with errno set. */
static int ns_try_enter(const char *path)
{
	int target = open(path, O_RDONLY | O_CLOEXEC);
	if (target < 0)
		return -1;
	int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home < 0 || setns(target, CLONE_NEWNET) != 0) {
		int e = errno;
		if (home >= 0)
			close(home);
		close(target);
		errno = e;
		return -1;
	}
	close(target);
	return home;
}

/** ns_try_enter, or one line and exit 1. */
static int ns_enter(const char *path)
{
	int home = ns_try_enter(path);
	if (home >= 0)
		return home;
	if (errno == EPERM)
		die("EPERM", "entering the network namespace needs CAP_SYS_ADMIN (run as root, e.g. with sudo)");
	if (errno == EINVAL)
		die("EINVAL", "%s is not a network namespace", path);
	die(errno_code(errno), "cannot enter the network namespace %s: %s", path, strerror(errno));
}

static void ns_leave(int home)
{
	if (setns(home, CLONE_NEWNET) != 0)
		die(errno_code(errno), "cannot return to this process's network namespace: %s", strerror(errno));
	close(home);
}

/** Enters the namespace at path just long enough to read its cookie and check that it has IPPROTO_SMC. */
static struct netns_id netns_identify(const char *path, int check_smc)
{
	struct netns_id id = {0};
	struct stat st;
	if (stat(path, &st) != 0)
		die(errno_code(errno), "cannot open the network namespace %s: %s", path, strerror(errno));
	id.inode = (unsigned int)st.st_ino;
	int home = ns_enter(path);
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	socklen_t len = sizeof id.cookie;
	if (s < 0 || getsockopt(s, SOL_SOCKET, SO_NETNS_COOKIE, &id.cookie, &len) != 0)
		die("ENOTSUP", "this kernel can't tell the namespace's cookie (SO_NETNS_COOKIE, Linux 5.14+): %s", strerror(errno));
	close(s);
	if (check_smc) {
		// what every switched socket will ask for: without it socket() would fail where TCP works
		int smc = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_SMC_);
		if (smc < 0) {
			int e = errno;
			struct utsname u;
			uname(&u);
			die("ENOSMC", "this kernel (%s) can't open IPPROTO_SMC sockets in that namespace (%s): the BPF switch needs Linux 6.11+ with CONFIG_SMC (try: modprobe smc)", u.release, strerror(e));
		}
		close(smc);
		int v6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (v6 >= 0) {
			close(v6);
			smc = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_SMC_);
			if (smc < 0)
				die("ENOSMC", "this kernel has IPv6 but can't open IPv6 IPPROTO_SMC sockets (%s): the BPF switch would make IPv6 TCP sockets fail", strerror(errno));
			close(smc);
		}
	}
	ns_leave(home);
	return id;
}

/** net.smc.hs_ctrl of the current namespace into cur ("" when the kernel has none), writing set there first. */
static int hs_ctrl_here(const char *set, char cur[16])
{
	int err = 0;
	cur[0] = 0;
	// /proc/sys/net shows the namespace of the process that opens it: this one, now
	if (set) {
		int fd = open(HS_SYSCTL, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, set, strlen(set) + 1) < 0)
			err = errno;
		if (fd >= 0)
			close(fd);
	}
	int fd = open(HS_SYSCTL, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, cur, 15);
		cur[n > 0 ? n : 0] = 0;
		cur[strcspn(cur, "\n")] = 0;
		close(fd);
	}
	return err;
}

/** hs_ctrl_here in the namespace at path. Returns 0 or the errno of the write. */
static int ns_hs_ctrl(const char *path, const char *set, char cur[16])
{
	int home = ns_enter(path);
	int err = hs_ctrl_here(set, cur);
	ns_leave(home);
	return err;
}

/** Pins map under pin unless it was reused (pinned already); 1 when this call pinned it. */
static int pin_new(struct bpf_map *map, const char *pin, int reused)
{
	int err;
	if (reused)
		return 0;
	if ((err = bpf_map__pin(map, pin)) != 0)
		die_bpf("pinning a map", -err);
	return 1;
}

/**
 * The pinned policy maps: the namespaces' (returned) and, when cg_fd is given, the cgroups'; registers
 * the handshake controller first when it is not: the kernel keeps a struct_ops registered until its
 * element is deleted, the pin is how a later command finds it.
 */
static int policy_map(int *cg_fd)
{
	int fd = bpf_obj_get(POLICY_PIN), cfd = bpf_obj_get(POLICY_CG_PIN);
	if (fd >= 0 && access(HS_PIN, F_OK) == 0) {
		if (cg_fd && cfd < 0)
			die("ENOTSUP", "the loaded destination policy is from an smc-run without cgroup scope: disable it (smc-run disable --all) and enable again");
		if (cg_fd)
			*cg_fd = cfd;
		else if (cfd >= 0)
			close(cfd);
		return fd;
	}
	struct bpf_object *obj = open_policy();
	if (!obj)
		die_bpf("opening the destination policy", errno);
	struct bpf_map *netns_map = map_named(obj, "smc_policy_netns"), *cg_map = map_named(obj, "smc_policy_cgroup");
	struct bpf_map *hs = map_named(obj, "smc_run_hs"), *scope_map = map_named(obj, "smc_switch_cgroup");
	// the switch's map of enabled cgroups, shared: both programs must take the same scope for a socket
	int scope_fd = bpf_obj_get(CG_PIN), err;
	if (scope_fd >= 0 && (err = bpf_map__reuse_fd(scope_map, scope_fd)) != 0)
		die_bpf("reusing the pinned cgroup map", -err);
	if (fd >= 0 && (err = bpf_map__reuse_fd(netns_map, fd)) != 0)
		die_bpf("reusing the pinned policy map", -err);
	if (cfd >= 0 && (err = bpf_map__reuse_fd(cg_map, cfd)) != 0)
		die_bpf("reusing the pinned cgroup policy map", -err);
	if ((err = bpf_object__load(obj)) != 0)
		die_bpf("loading the destination policy (struct_ops smc_hs_ctrl) into the kernel", -err);
	int pinned = pin_new(netns_map, POLICY_PIN, fd >= 0), pinned_cg = pin_new(cg_map, POLICY_CG_PIN, cfd >= 0);
	int pinned_scope = pin_new(scope_map, CG_PIN, scope_fd >= 0);
	struct bpf_link *link = bpf_map__attach_struct_ops(hs);
	err = libbpf_get_error(link);
	if (!err) {
		bpf_link__disconnect(link); // the registration outlives this process; disable deletes it
		bpf_link__destroy(link);
		err = bpf_map__pin(hs, HS_PIN);
	}
	if (err) {
		if (pinned)
			unlink(POLICY_PIN);
		if (pinned_cg)
			unlink(POLICY_CG_PIN);
		if (pinned_scope)
			unlink(CG_PIN);
		if (-err == EEXIST)
			die("EEXIST", "a BPF handshake controller named %s is registered, but not by this smc-run (no pin at %s): remove it, or reboot", HS_NAME, HS_PIN);
		die_bpf("registering the destination policy (struct_ops smc_hs_ctrl)", -err);
	}
	if (scope_fd >= 0)
		close(scope_fd);
	fd = dup(bpf_map__fd(netns_map));
	if (cg_fd)
		*cg_fd = dup(bpf_map__fd(cg_map));
	bpf_object__close(obj);
	return fd;
}

/** Unregisters the handshake controller and unpins it with its map (no namespace names it any more). */
static void policy_unload(void)
{
	int hs = bpf_obj_get(HS_PIN);
	if (hs >= 0) {
		unsigned int zero = 0;
		if (bpf_map_delete_elem(hs, &zero) != 0 && errno != ENOENT)
			die_bpf("unregistering the destination policy", errno);
		close(hs);
	}
	if (unlink(HS_PIN) != 0 && errno != ENOENT)
		die_bpf("unpinning the destination policy", errno);
	if (unlink(POLICY_PIN) != 0 && errno != ENOENT)
		die_bpf("unpinning the policy map", errno);
	if (unlink(POLICY_CG_PIN) != 0 && errno != ENOENT)
		die_bpf("unpinning the cgroup policy map", errno);
}

static int count_entries(int map_fd);
static int prune_ended(int map_fd);
static void hs_ctrl_clear_everywhere(void);

/** Entries in the pinned map at pin (0 when it is not pinned). */
static int pinned_entries(const char *pin)
{
	int fd = bpf_obj_get(pin);
	int n = fd >= 0 ? count_entries(fd) : 0;
	if (fd >= 0)
		close(fd);
	return n;
}

/** With no policy left (namespace or cgroup), net.smc.hs_ctrl goes back to "" wherever it names ours, then the controller. */
static void policy_unload_unused(void)
{
	if (access(HS_PIN, F_OK) != 0 || pinned_entries(POLICY_PIN) + pinned_entries(POLICY_CG_PIN) > 0)
		return;
	hs_ctrl_clear_everywhere();
	policy_unload();
}

/**
 * Removes the policy of a namespace (its entry; net.smc.hs_ctrl there when it names ours and no cgroup
 * scope's policy may need it); 1 if there was one. path NULL: the namespace may be gone (disable
 * cookie:N), its net.smc.hs_ctrl is cleared when the controller goes.
 */
static int policy_clear(const char *path, unsigned long long cookie)
{
	int fd = bpf_obj_get(POLICY_PIN);
	if (fd < 0)
		return 0;
	char cur[16] = "";
	if (path)
		ns_hs_ctrl(path, NULL, cur);
	if (!strcmp(cur, HS_NAME) && pinned_entries(POLICY_CG_PIN) == 0) {
		int err = ns_hs_ctrl(path, "", cur);
		if (err)
			die(errno_code(err), "clearing net.smc.hs_ctrl in %s: %s", path, strerror(err));
	}
	int was = bpf_map_delete_elem(fd, &cookie) == 0;
	close(fd);
	policy_unload_unused();
	return was;
}

/** Refuses (one line) a namespace whose net.smc.hs_ctrl names another controller than smc-run's. */
static void refuse_other_hs_ctrl(const char *path, const char *what)
{
	char cur[16];
	ns_hs_ctrl(path, NULL, cur);
	if (cur[0] && strcmp(cur, HS_NAME))
		die("EBUSY", "net.smc.hs_ctrl in %s names another BPF handshake controller (\"%s\"): smc-run won't replace it; clear it first (smc-run sysctl set hs_ctrl= in that namespace)", what, cur);
}

/** Makes net.smc.hs_ctrl of the namespace at path name smc-run's controller, never replacing another's. */
static void claim_hs_ctrl(const char *path, const char *what)
{
	refuse_other_hs_ctrl(path, what);
	char cur[16];
	int err = ns_hs_ctrl(path, HS_NAME, cur);
	if (err)
		die(errno_code(err), "setting net.smc.hs_ctrl=%s in %s: %s", HS_NAME, what, strerror(err));
}

// set by cmd_enable while its policy is in place but the switch not yet: a failure takes it back
// and the namespace's policy before it, which the undo puts back (a failed re-enable changes nothing)
static const char *undo_path;
static unsigned long long undo_cookie;
static struct policy_value undo_prev;
static int undo_had_prev;
static void undo_policy(void)
{
	int fd = undo_had_prev ? bpf_obj_get(POLICY_PIN) : -1;
	if (fd >= 0 && bpf_map_update_elem(fd, &undo_cookie, &undo_prev, BPF_ANY) == 0) {
		close(fd);
		return;
	}
	if (fd >= 0)
		close(fd);
	policy_clear(undo_path, undo_cookie);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int cmd_probe(void)
{
	struct kernel_facts k = probe_kernel();
	struct utsname u;
	uname(&u);
	int loaded = pinned_here(LINK_PIN);
	// this loader can parse its own embedded objects (their byte order is its own): no kernel involved
	struct bpf_object *sw = open_switch(), *pol = open_policy();
	int objects = sw && pol;
	bpf_object__close(sw);
	bpf_object__close(pol);
	printf("{\"kernel\":\"%s\",\"btf\":%s,\"hook\":%s,\"hsCtrl\":%s,\"loaded\":%s,\"objects\":%s}\n", u.release,
	       k.btf ? "true" : "false", k.hook ? "true" : "false", k.hs_ctrl ? "true" : "false", loaded ? "true" : "false",
	       objects ? "true" : "false");
	return 0;
}

/**
 * Loads the switch and attaches it, reusing the pinned maps that are left (their entries stand); first
 * (NULL when a cgroup is enabled first) goes in the namespace map.
 */
static void load_and_pin(int map_fd, const struct netns_id *first, const struct ns_value *v)
{
	struct bpf_object *obj = open_switch();
	if (!obj)
		die_bpf("opening the BPF switch", errno);
	struct bpf_map *netns_map = map_named(obj, "smc_switch_netns");
	struct bpf_map *cg_map = map_named(obj, "smc_switch_cgroup"), *cgn_map = map_named(obj, "smc_switch_cgroups");
	int cg_fd = bpf_obj_get(CG_PIN), cgn_fd = bpf_obj_get(CGN_PIN);
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, "smc_switch");
	if (!prog)
		die_bpf("smc_switch", ENOENT);
	int err;
	if (map_fd >= 0 && (err = bpf_map__reuse_fd(netns_map, map_fd)) != 0)
		die_bpf("reusing the pinned map", -err);
	// TEST ONLY (the full map's guest test): a map of a few entries instead of 4096
	const char *max = getenv("SMC_RUN_TEST_SWITCH_MAP_MAX");
	if (map_fd < 0 && max && atoi(max) > 0 && (err = bpf_map__set_max_entries(netns_map, (unsigned)atoi(max))) != 0)
		die_bpf("sizing the map", -err);
	if (cg_fd >= 0 && (err = bpf_map__reuse_fd(cg_map, cg_fd)) != 0)
		die_bpf("reusing the pinned cgroup map", -err);
	if (cgn_fd >= 0 && (err = bpf_map__reuse_fd(cgn_map, cgn_fd)) != 0)
		die_bpf("reusing the pinned cgroup count", -err);
	if ((err = bpf_object__load(obj)) != 0)
		die_bpf("loading the BPF switch into the kernel", -err);
	int fd = bpf_map__fd(netns_map);
	if (first && bpf_map_update_elem(fd, &first->cookie, v, BPF_ANY) != 0)
		die_bpf("adding the namespace", errno);
	int pinned_map = pin_new(netns_map, MAP_PIN, map_fd >= 0);
	int pinned_cg = pin_new(cg_map, CG_PIN, cg_fd >= 0), pinned_cgn = pin_new(cgn_map, CGN_PIN, cgn_fd >= 0);
	struct bpf_link *link = bpf_program__attach_trace(prog);
	err = libbpf_get_error(link);
	if (!err && (err = bpf_link__pin(link, LINK_PIN)) == 0)
		return; // the pinned link holds the program; this process may exit
	if (pinned_map)
		unlink(MAP_PIN); // nothing half-loaded
	if (pinned_cg)
		unlink(CG_PIN);
	if (pinned_cgn)
		unlink(CGN_PIN);
	die_bpf("attaching the BPF switch to update_socket_protocol", -err);
}

/** A policy in hex (src/bpf/policy.ts) into pv, once it is sure this kernel can hold one. */
static void parse_policy(const char *hex, struct policy_value *pv)
{
	if (!probe_kernel().hs_ctrl || access(HS_SYSCTL, F_OK) != 0) {
		struct utsname u;
		uname(&u);
		die("ENOTSUP", "this kernel (%s) has no BPF handshake controller (struct smc_hs_ctrl and net.smc.hs_ctrl, Linux 6.19+ with CONFIG_SMC_HS_CTRL_BPF): destination policy can't be applied in the kernel", u.release);
	}
	size_t len = strlen(hex);
	if (len != 2 * sizeof *pv)
		die("EINVAL", "policy: %zu hex digits, expected %zu", len, 2 * sizeof *pv);
	unsigned char *b = (unsigned char *)pv;
	for (size_t i = 0; i < sizeof *pv; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			die("EINVAL", "policy: not hex at %zu", 2 * i);
		b[i] = (unsigned char)(hi << 4 | lo);
	}
}

/** TEST ONLY (the rollback's guest test): the switch's step fails after the policy's. */
static void test_enable_fault(void)
{
	const char *fault = getenv("SMC_RUN_TEST_ENABLE_FAULT");
	if (fault && !strcmp(fault, "switch"))
		die("EIO", "the switch could not be put in place (SMC_RUN_TEST_ENABLE_FAULT=switch)");
}

static int cmd_enable(const char *path, const char *policy_hex)
{
	require_kernel();
	struct netns_id id = netns_identify(path, 1);
	struct policy_value pv = {0};
	if (policy_hex) {
		parse_policy(policy_hex, &pv);
		refuse_other_hs_ctrl(path, "that namespace"); // before anything is loaded
	}
	int lock = lock_dir(1);
	// the policy first: it only ever holds connections back, so no moment has the switch without it
	int policy = 0;
	if (policy_hex) {
		int pfd = policy_map(NULL);
		undo_had_prev = bpf_map_lookup_elem(pfd, &id.cookie, &undo_prev) == 0;
		if (bpf_map_update_elem(pfd, &id.cookie, &pv, BPF_ANY) != 0)
			die_bpf("setting the namespace's policy", errno);
		undo_path = path;
		undo_cookie = id.cookie;
		undo = undo_policy;
		claim_hs_ctrl(path, "that namespace");
		close(pfd);
		policy = 1;
	}
	test_enable_fault();
	int map_fd = bpf_obj_get(MAP_PIN);
	if (map_fd < 0 && errno != ENOENT)
		die_bpf("opening the pinned map", errno);
	struct ns_value v = {.switched = 0, .inode = id.inode};
	int already = map_fd >= 0 && bpf_map_lookup_elem(map_fd, &id.cookie, &v) == 0;
	// with rules the switch holds the namespace's sockets back where its controller isn't chosen
	unsigned int flags = policy ? SCOPE_POLICY : 0, changed = already && v.flags != flags;
	v.flags = flags;
	int linked = access(LINK_PIN, F_OK) == 0;
	if (linked && map_fd < 0) {
		unlink(LINK_PIN); // a link without its map (removed by hand): start again
		linked = 0;
	}
	if (!linked)
		load_and_pin(map_fd, &id, &v);
	else if (changed && bpf_map_update_elem(map_fd, &id.cookie, &v, BPF_EXIST) != 0)
		die_bpf("updating the namespace", errno);
	else if (!already && bpf_map_update_elem(map_fd, &id.cookie, &v, BPF_NOEXIST) != 0) {
		// full: the entries of namespaces that ended go first, then it is the limit
		int err = errno;
		if (err == E2BIG && prune_ended(map_fd) > 0)
			err = bpf_map_update_elem(map_fd, &id.cookie, &v, BPF_NOEXIST) == 0 ? 0 : errno;
		if (err == E2BIG)
			die("ENOSPC", "the BPF switch holds %d namespaces, its most, all of them still there: disable some (smc-run status lists them)",
			    count_entries(map_fd));
		if (err)
			die_bpf("adding the namespace", err);
	}
	undo = NULL;
	// enable without rules: the whole namespace again; the policy goes last, once nothing can fail
	if (!policy_hex)
		policy_clear(path, id.cookie);
	printf("{\"cookie\":\"%llu\",\"inode\":%u,\"already\":%s,\"policy\":%s}\n", id.cookie, id.inode, already && linked ? "true" : "false", policy ? "true" : "false");
	close(lock);
	return 0;
}

static void unpin_all(void)
{
	if (unlink(LINK_PIN) != 0 && errno != ENOENT)
		die_bpf("unpinning the link", errno);
	if (unlink(MAP_PIN) != 0 && errno != ENOENT)
		die_bpf("unpinning the map", errno);
	if (unlink(CG_PIN) != 0 && errno != ENOENT)
		die_bpf("unpinning the cgroup map", errno);
	if (unlink(CGN_PIN) != 0 && errno != ENOENT)
		die_bpf("unpinning the cgroup count", errno);
	rmdir(DIR_PIN); // fails (harmlessly) while another command holds it open
}

static int count_entries(int map_fd)
{
	unsigned long long key, next;
	int n = 0;
	for (int r = bpf_map_get_next_key(map_fd, NULL, &next); r == 0; r = bpf_map_get_next_key(map_fd, &key, &next)) {
		key = next;
		n++;
	}
	return n;
}

/** "cookie:N" / "id:N": an entry named by its key, for a namespace or cgroup that may be gone (the OCI hook's poststop). */
static int key_given(const char *arg, const char *prefix, unsigned long long *key)
{
	size_t n = strlen(prefix);
	if (strncmp(arg, prefix, n) != 0)
		return 0;
	char *end;
	errno = 0;
	*key = strtoull(arg + n, &end, 10);
	if (errno || end == arg + n || *end)
		die("EUSAGE", "%s: not %sNUMBER", arg, prefix);
	return 1;
}

static int cmd_disable(const char *path)
{
	struct netns_id id = {0};
	int by_cookie = key_given(path, "cookie:", &id.cookie);
	if (!by_cookie)
		id = netns_identify(path, 0);
	int lock = lock_dir(0);
	int map_fd = lock < 0 ? -1 : bpf_obj_get(MAP_PIN);
	if (map_fd < 0 && lock >= 0 && errno != ENOENT)
		die_bpf("opening the pinned map", errno);
	struct ns_value v = {0};
	int was = map_fd >= 0 && bpf_map_lookup_elem(map_fd, &id.cookie, &v) == 0;
	if (by_cookie)
		id.inode = v.inode;
	if (lock >= 0)
		policy_clear(by_cookie ? NULL : path, id.cookie);
	if (was && bpf_map_delete_elem(map_fd, &id.cookie) != 0)
		die_bpf("removing the namespace", errno);
	int left = map_fd >= 0 ? count_entries(map_fd) : 0;
	if (lock >= 0 && left == 0 && pinned_entries(CG_PIN) == 0)
		unpin_all();
	printf("{\"cookie\":\"%llu\",\"inode\":%u,\"was\":%s,\"switched\":%llu,\"left\":%d}\n", id.cookie, id.inode, was ? "true" : "false", v.switched, left);
	return 0;
}

#define CGROUP2_SUPER_MAGIC_ 0x63677270
/** The cgroup id of a cgroup v2 directory (its file handle, as bpf_get_current_cgroup_id() gives it). */
static unsigned long long cgroup_id(const char *path)
{
	struct statfs fs;
	if (statfs(path, &fs) != 0)
		die(errno_code(errno), "%s: %s", path, strerror(errno));
	if ((unsigned long)fs.f_type != CGROUP2_SUPER_MAGIC_)
		die("EINVAL", "%s is not a cgroup v2 directory (cgroup v1 or another file system): the cgroup scope needs the unified hierarchy", path);
	struct {
		struct file_handle fh;
		unsigned long long id;
	} h = {.fh.handle_bytes = sizeof(unsigned long long)};
	int mount_id;
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) != 0 || h.fh.handle_bytes != sizeof h.id)
		die(errno_code(errno), "%s: reading its cgroup id: %s", path, strerror(errno));
	return h.id;
}


/** The program's shortcut: how many cgroups are switched (0: it skips the walk up the task's cgroups). */
static void set_cgroup_count(int cg_fd)
{
	int cgn = bpf_obj_get(CGN_PIN);
	unsigned int zero = 0, n = (unsigned int)count_entries(cg_fd);
	if (cgn < 0 || bpf_map_update_elem(cgn, &zero, &n, BPF_ANY) != 0)
		die_bpf("updating the cgroup count", errno);
	close(cgn);
}

/** A set of namespace inodes (a handful to thousands: a linear search is enough). */
struct inode_set {
	unsigned int *v;
	int n, cap;
};

static int inode_set_has(const struct inode_set *s, unsigned int ino)
{
	for (int i = 0; i < s->n; i++)
		if (s->v[i] == ino)
			return 1;
	return 0;
}

static int inode_set_add(struct inode_set *s, unsigned int ino)
{
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 256;
		unsigned int *v = realloc(s->v, (size_t)cap * sizeof *v);
		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = ino;
	return 0;
}

/**
 * fn(path, inode, arg) once for every network namespace a path reaches (/run/netns/NAME, /proc/PID/ns/net):
 * the namespaces that exist. 0, or -1 when the walk was cut short (out of memory).
 */
static int each_netns(void (*fn)(const char *path, unsigned int inode, void *arg), void *arg)
{
	static const char *dirs[] = {"/run/netns", "/proc"};
	struct inode_set seen = {0};
	int rc = 0;
	for (int d = 0; d < 2 && !rc; d++) {
		DIR *dir = opendir(dirs[d]);
		if (!dir)
			continue;
		struct dirent *e;
		while ((e = readdir(dir))) {
			if (e->d_name[0] == '.' || (d == 1 && (e->d_name[0] < '0' || e->d_name[0] > '9')))
				continue;
			char path[300];
			snprintf(path, sizeof path, d == 0 ? "%s/%s" : "%s/%s/ns/net", dirs[d], e->d_name);
			struct stat st;
			if (stat(path, &st) != 0 || inode_set_has(&seen, (unsigned int)st.st_ino))
				continue;
			if (inode_set_add(&seen, (unsigned int)st.st_ino) != 0) {
				rc = -1;
				break;
			}
			fn(path, (unsigned int)st.st_ino, arg);
		}
		closedir(dir);
	}
	free(seen.v);
	return rc;
}

static void hs_ctrl_clear_in(const char *path, unsigned int inode, void *arg)
{
	(void)inode;
	(void)arg;
	int home = ns_try_enter(path);
	if (home < 0)
		return; // ended meanwhile
	char cur[16];
	hs_ctrl_here(NULL, cur);
	int err = strcmp(cur, HS_NAME) ? 0 : hs_ctrl_here("", cur);
	if (err)
		fprintf(stderr, "smc-bpf: clearing net.smc.hs_ctrl in %s: %s\n", path, strerror(err));
	ns_leave(home);
}

/**
 * Before the controller goes: net.smc.hs_ctrl back to "" in every namespace that names it and that a
 * path reaches; a namespace no process holds any more is gone.
 */
static void hs_ctrl_clear_everywhere(void)
{
	each_netns(hs_ctrl_clear_in, NULL);
}

static void add_live(const char *path, unsigned int inode, void *arg)
{
	(void)path;
	inode_set_add(arg, inode);
}

/**
 * Removes the entries (switch and policy) of namespaces that ended: no process is in them and no name in
 * /run/netns holds them. Run when the map is full; the count removed.
 */
static int prune_ended(int map_fd)
{
	struct inode_set live = {0};
	if (each_netns(add_live, &live) != 0 || live.n == 0) {
		free(live.v);
		return 0; // the walk saw nothing (or ran out of memory): nothing is judged ended
	}
	int policy_fd = bpf_obj_get(POLICY_PIN), removed = 0;
	unsigned long long key, next;
	int r = bpf_map_get_next_key(map_fd, NULL, &next);
	while (r == 0) {
		key = next;
		r = bpf_map_get_next_key(map_fd, &key, &next);
		struct ns_value v;
		if (bpf_map_lookup_elem(map_fd, &key, &v) != 0 || inode_set_has(&live, v.inode))
			continue;
		if (bpf_map_delete_elem(map_fd, &key) == 0)
			removed++;
		if (policy_fd >= 0)
			bpf_map_delete_elem(policy_fd, &key);
	}
	if (policy_fd >= 0)
		close(policy_fd);
	free(live.v);
	return removed;
}

#define FILEID_KERNFS_ 0xfe // the file handle type of a cgroup directory (kernfs): the cgroup id

/**
 * The path of the cgroup with this id into out (as this mount namespace sees it): 1; 0 when the cgroup
 * is gone (its directory was removed); -1 when that can't be told (no cgroup v2 at /sys/fs/cgroup).
 */
static int cgroup_path_of(unsigned long long id, char *out, size_t n)
{
	int root = open(CGROUP_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -1;
	struct {
		struct file_handle fh;
		unsigned long long id;
	} h = {.fh.handle_bytes = sizeof(unsigned long long), .fh.handle_type = FILEID_KERNFS_, .id = id};
	int fd = open_by_handle_at(root, &h.fh, O_PATH | O_CLOEXEC);
	int e = errno;
	close(root);
	if (fd < 0)
		return e == ESTALE || e == ENOENT ? 0 : -1;
	char link[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t len = readlink(link, out, n - 1);
	close(fd);
	if (len <= 0)
		return -1;
	out[len] = 0;
	return 1;
}

/** Removes the entries (switch and policy) of cgroups whose directory is gone. */
static void prune_cgroups(void)
{
	const char *pins[] = {CG_PIN, POLICY_CG_PIN};
	for (int m = 0; m < 2; m++) {
		int fd = bpf_obj_get(pins[m]);
		if (fd < 0)
			continue;
		unsigned long long key, next;
		char path[4096];
		int r = bpf_map_get_next_key(fd, NULL, &next);
		while (r == 0) {
			key = next;
			r = bpf_map_get_next_key(fd, &key, &next);
			if (cgroup_path_of(key, path, sizeof path) == 0)
				bpf_map_delete_elem(fd, &key);
		}
		if (m == 0)
			set_cgroup_count(fd);
		close(fd);
	}
}

/**
 * fn(path) once for each network namespace (/proc/PID/ns/net) that a task of cgroup dir, or of one below
 * it (16 levels), is in now.
 */
static void each_cgroup_netns(const char *dir, int depth, struct inode_set *seen, void (*fn)(const char *path))
{
	char p[4096];
	snprintf(p, sizeof p, "%s/cgroup.procs", dir);
	FILE *f = fopen(p, "re");
	int pid;
	while (f && fscanf(f, "%d", &pid) == 1) {
		char ns[64];
		struct stat st;
		snprintf(ns, sizeof ns, "/proc/%d/ns/net", pid);
		if (stat(ns, &st) != 0 || inode_set_has(seen, (unsigned int)st.st_ino) || inode_set_add(seen, (unsigned int)st.st_ino) != 0)
			continue;
		fn(ns);
	}
	if (f)
		fclose(f);
	DIR *d = depth < 16 ? opendir(dir) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		each_cgroup_netns(p, depth + 1, seen, fn);
	}
	if (d)
		closedir(d);
}

static void claim_hs_ctrl_at(const char *path)
{
	claim_hs_ctrl(path, path);
}

// set by cmd_enable_cgroup while its policy is in place but the switch not yet (as undo_policy)
static unsigned long long undo_cg_id;
static struct policy_value undo_cg_prev;
static int undo_cg_had_prev;
static void undo_cgroup_policy(void)
{
	int fd = bpf_obj_get(POLICY_CG_PIN);
	if (fd >= 0) {
		if (undo_cg_had_prev)
			bpf_map_update_elem(fd, &undo_cg_id, &undo_cg_prev, BPF_ANY);
		else
			bpf_map_delete_elem(fd, &undo_cg_id);
		close(fd);
	}
	policy_unload_unused();
}

/** Removes a cgroup's policy (its entry; the controller when no policy is left). */
static void cgroup_policy_clear(unsigned long long id)
{
	int fd = bpf_obj_get(POLICY_CG_PIN);
	if (fd < 0)
		return;
	bpf_map_delete_elem(fd, &id);
	close(fd);
	policy_unload_unused();
}

static int cmd_enable_cgroup(const char *path, const char *policy_hex)
{
	require_kernel();
	unsigned long long id = cgroup_id(path);
	struct policy_value pv = {0};
	if (policy_hex) {
		parse_policy(policy_hex, &pv);
		if (!probe_kernel().sock_cgroup)
			die("ENOTSUP", "this kernel's sockets keep no cgroup (CONFIG_SOCK_CGROUP_DATA, which CONFIG_CGROUP_BPF selects, is off): the destination policy can't tell a cgroup's connections; enable the cgroup without rules");
	}
	int lock = lock_dir(1);
	int linked = pinned_here(LINK_PIN);
	if (linked && access(CG_PIN, F_OK) != 0)
		die("ENOTSUP", "the loaded BPF switch is from an smc-run without cgroup scope: disable it (smc-run disable --all) and enable again");
	prune_cgroups();
	// the policy first, as for a namespace: it only ever holds connections back
	if (policy_hex) {
		int cg_policy = -1, pfd = policy_map(&cg_policy);
		close(pfd);
		undo_cg_id = id;
		undo_cg_had_prev = bpf_map_lookup_elem(cg_policy, &id, &undo_cg_prev) == 0;
		if (bpf_map_update_elem(cg_policy, &id, &pv, BPF_ANY) != 0)
			die(errno == E2BIG ? "ENOSPC" : errno_code(errno), "setting the cgroup's policy: %s", strerror(errno));
		close(cg_policy);
		undo = undo_cgroup_policy;
		// the kernel asks the controller only in namespaces that name it: this one (the host's, where
		// services and host-network containers run) and the ones the cgroup's tasks are in now; a task
		// that moves to another namespace later gets TCP there (the switch checks, smc-switch.bpf.c)
		claim_hs_ctrl("/proc/self/ns/net", "this namespace");
		struct inode_set seen = {0};
		each_cgroup_netns(path, 0, &seen, claim_hs_ctrl_at);
		free(seen.v);
	}
	test_enable_fault();
	int map_fd = bpf_obj_get(MAP_PIN);
	if (!linked) {
		if (map_fd >= 0)
			unlink(LINK_PIN);
		load_and_pin(map_fd, NULL, NULL);
	}
	int cg_fd = bpf_obj_get(CG_PIN);
	if (cg_fd < 0)
		die_bpf("opening the pinned cgroup map", errno);
	struct cg_value v = {0};
	int already = bpf_map_lookup_elem(cg_fd, &id, &v) == 0;
	v.flags = policy_hex ? SCOPE_POLICY : 0;
	if (bpf_map_update_elem(cg_fd, &id, &v, already ? BPF_EXIST : BPF_NOEXIST) != 0)
		die(errno == E2BIG ? "ENOSPC" : errno_code(errno), "adding the cgroup: %s", errno == E2BIG ? "the BPF switch holds 1024 cgroups, its most: disable some (smc-run status lists them)" : strerror(errno));
	set_cgroup_count(cg_fd);
	undo = NULL;
	// enable without rules: the whole cgroup again; its policy goes last, once nothing can fail
	if (!policy_hex)
		cgroup_policy_clear(id);
	printf("{\"cgroup\":\"%llu\",\"already\":%s,\"policy\":%s}\n", id, already ? "true" : "false", policy_hex ? "true" : "false");
	close(lock);
	return 0;
}

static int cmd_disable_cgroup(const char *path)
{
	unsigned long long id;
	if (!key_given(path, "id:", &id))
		id = cgroup_id(path);
	int lock = lock_dir(0);
	if (lock >= 0)
		prune_cgroups();
	int cg_fd = lock < 0 ? -1 : bpf_obj_get(CG_PIN);
	struct cg_value v = {0};
	int was = cg_fd >= 0 && bpf_map_lookup_elem(cg_fd, &id, &v) == 0;
	if (was && bpf_map_delete_elem(cg_fd, &id) != 0)
		die_bpf("removing the cgroup", errno);
	if (cg_fd >= 0)
		set_cgroup_count(cg_fd);
	// the switch first (its new sockets are TCP), then the rules nothing needs any more
	if (lock >= 0)
		cgroup_policy_clear(id);
	int map_fd = lock < 0 ? -1 : bpf_obj_get(MAP_PIN);
	int left = (map_fd >= 0 ? count_entries(map_fd) : 0) + (cg_fd >= 0 ? count_entries(cg_fd) : 0);
	if (lock >= 0 && left == 0)
		unpin_all();
	printf("{\"cgroup\":\"%llu\",\"was\":%s,\"switched\":%llu,\"left\":%d}\n", id, was ? "true" : "false", v.switched, left);
	return 0;
}

static int cmd_disable_all(void)
{
	int lock = lock_dir(0);
	int map_fd = lock < 0 ? -1 : bpf_obj_get(MAP_PIN);
	int n = map_fd >= 0 ? count_entries(map_fd) : 0;
	if (lock >= 0 && access(HS_PIN, F_OK) == 0) {
		hs_ctrl_clear_everywhere();
		policy_unload();
	}
	if (lock >= 0)
		unpin_all();
	printf("{\"removed\":%d}\n", n);
	return 0;
}

/** ,"policy":"HEX" of a status entry (src/bpf/policy.ts decodes it). */
static void print_policy(const struct policy_value *pv)
{
	printf(",\"policy\":\"");
	for (size_t i = 0; i < sizeof *pv; i++)
		printf("%02x", ((const unsigned char *)pv)[i]);
	printf("\"");
}

static int cmd_status(void)
{
	int dir = open(DIR_PIN, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0 && (errno == ELOOP || errno == ENOTDIR))
		die("EPERM", "%s is not a directory (a symlink or a file someone else made): remove it (rm %s) and run again", DIR_PIN, DIR_PIN);
	if (dir >= 0) {
		trust_dir(dir);
		close(dir);
	}
	int loaded = pinned_here(LINK_PIN);
	int map_fd = bpf_obj_get(MAP_PIN);
	// ENOSYS: a kernel without the bpf() system call (CONFIG_BPF_SYSCALL off) has nothing loaded
	if (map_fd < 0 && errno != ENOENT && errno != ENOSYS)
		die_bpf("opening the pinned map", errno);
	int policy_fd = bpf_obj_get(POLICY_PIN);
	printf("{\"loaded\":%s,\"policyLoaded\":%s,\"namespaces\":[", loaded ? "true" : "false", pinned_here(HS_PIN) ? "true" : "false");
	unsigned long long key, next;
	int n = 0;
	if (map_fd >= 0) {
		for (int r = bpf_map_get_next_key(map_fd, NULL, &next); r == 0; r = bpf_map_get_next_key(map_fd, &key, &next)) {
			key = next;
			struct ns_value v;
			if (bpf_map_lookup_elem(map_fd, &key, &v) != 0)
				continue; // removed meanwhile
			printf("%s{\"cookie\":\"%llu\",\"inode\":%u,\"switched\":%llu", n++ ? "," : "", key, v.inode, v.switched);
			struct policy_value pv;
			if (policy_fd >= 0 && bpf_map_lookup_elem(policy_fd, &key, &pv) == 0)
				print_policy(&pv);
			printf("}");
		}
	}
	printf("],\"cgroups\":[");
	int cg_fd = bpf_obj_get(CG_PIN), cg_policy = bpf_obj_get(POLICY_CG_PIN), c = 0;
	if (cg_fd >= 0) {
		unsigned long long ck, cnext;
		for (int r = bpf_map_get_next_key(cg_fd, NULL, &cnext); r == 0; r = bpf_map_get_next_key(cg_fd, &ck, &cnext)) {
			ck = cnext;
			struct cg_value cv;
			if (bpf_map_lookup_elem(cg_fd, &ck, &cv) != 0)
				continue;
			printf("%s{\"id\":\"%llu\",\"switched\":%llu", c++ ? "," : "", ck, cv.switched);
			char where[4096];
			int found = cgroup_path_of(ck, where, sizeof where);
			if (found == 1) {
				printf(",\"path\":\"");
				for (const char *q = where; *q; q++)
					printf(*q == '"' || *q == '\\' ? "\\%c" : (unsigned char)*q < 0x20 ? "?" : "%c", *q);
				printf("\"");
			} else if (found == 0)
				printf(",\"removed\":true");
			struct policy_value pv;
			if (cg_policy >= 0 && bpf_map_lookup_elem(cg_policy, &ck, &pv) == 0)
				print_policy(&pv);
			printf("}");
		}
		close(cg_fd);
	}
	if (cg_policy >= 0)
		close(cg_policy);
	printf("]}\n");
	return 0;
}

int main(int argc, char **argv)
{
	libbpf_set_print(on_libbpf_print);
	const char *cmd = argc > 1 ? argv[1] : "";
	if (!strcmp(cmd, "probe") && argc == 2)
		return cmd_probe();
	if (!strcmp(cmd, "status") && argc == 2)
		return cmd_status();
	if (!strcmp(cmd, "enable") && (argc == 3 || argc == 4))
		return cmd_enable(argv[2], argc == 4 ? argv[3] : NULL);
	if (!strcmp(cmd, "disable") && argc == 3)
		return cmd_disable(argv[2]);
	if (!strcmp(cmd, "disable-all") && argc == 2)
		return cmd_disable_all();
	if (!strcmp(cmd, "enable-cgroup") && (argc == 3 || argc == 4))
		return cmd_enable_cgroup(argv[2], argc == 4 ? argv[3] : NULL);
	if (!strcmp(cmd, "disable-cgroup") && argc == 3)
		return cmd_disable_cgroup(argv[2]);
	fprintf(stderr, "EUSAGE usage: smc-bpf probe | status | enable NETNS [POLICY] | disable NETNS|cookie:N | disable-all | enable-cgroup DIR [POLICY] | disable-cgroup DIR|id:N\n");
	return 2;
}
