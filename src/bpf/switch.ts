// The BPF switch (`smc-run enable`): the typed side of native/bpf/smc-bpf.c, the small program that loads the
// BPF program (native/bpf/smc-switch.bpf.c) and edits its map of switched network namespaces. This module
// finds the program, runs it with a namespace handed over as an open fd (the CLI opened it once: the PID
// or path is never looked up again) and turns its answer into values or BpfSwitchErrors.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { NetnsHandle } from '../netns';
import { PACKAGE_ROOT } from '../package-root';
import { decodePolicy, type KernelPolicy } from './policy';

/**
 * What the loader (or its absence) reported: an smc-run code (ENOTSUP, EINTERNAL, EUSAGE) or an errno
 * name. isUsage: the loader refused its own arguments; anything else is the system's answer.
 */
export class BpfSwitchError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly isUsage = false,
  ) {
    super(message);
  }
}

/** What this kernel allows (smc-bpf probe). */
export interface BpfKernelFacts {
  kernel: string;
  /** /sys/kernel/btf/vmlinux: the program's CO-RE accesses can be relocated */
  btf: boolean;
  /** update_socket_protocol() (Linux 6.6+): the hook that picks a socket's protocol */
  hook: boolean;
  /** struct smc_hs_ctrl (Linux 6.19+): per-connection SMC decisions in the kernel */
  hsCtrl: boolean;
  /** the switch is attached (pinned in bpffs) */
  loaded: boolean;
  /** the loader parses its embedded BPF objects (false: they were built for the other byte order) */
  objects: boolean;
}

export interface SwitchedNamespace {
  /** SO_NETNS_COOKIE: never reused, unlike the inode */
  cookie: string;
  inode: number;
  /** TCP sockets the switch turned into SMC sockets there so far */
  switched: number;
  /** its destination policy (src/bpf/policy.ts), when one is set */
  policy?: KernelPolicy;
}

export interface EnableResult { cookie: string; inode: number; already: boolean; policy: boolean }

/** The name the destination policy registers under; net.smc.hs_ctrl of a namespace with a policy. */
export const HS_CTRL_NAME = 'smc_run';
export interface DisableResult { cookie: string; inode: number; was: boolean; switched: number; left: number }

/**
 * The loader: SMC_RUN_BPF_LOADER when set (an operator's own build; tests of the missing-loader path),
 * else the contributor's build (npm run build), else the package's prebuild.
 */
export function loaderPath(): string | undefined {
  const own = process.env.SMC_RUN_BPF_LOADER;
  const candidates = own ? [own] : [path.join(PACKAGE_ROOT, 'build', 'Release', 'smc-bpf'), path.join(PACKAGE_ROOT, 'prebuilds', `linux-${process.arch}`, 'smc-bpf')];
  return candidates.find((p) => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return isForThisMachine(p);
    } catch {
      return false;
    }
  });
}

// ELF e_machine of each architecture Node runs on here
const ELF_MACHINE: Partial<Record<string, number>> = { x64: 62, arm64: 183, s390x: 22, ppc64: 21, riscv64: 243, arm: 40, ia32: 3 };

/**
 * Whether an ELF file is for this machine: a checkout shared with a guest of another architecture (or a
 * copied build/) holds a loader that can't run here; exec would hand it to sh instead of failing.
 */
function isForThisMachine(file: string): boolean {
  const want = ELF_MACHINE[process.arch];
  const h = Buffer.alloc(20);
  const fd = fs.openSync(file, 'r');
  try {
    if (fs.readSync(fd, h, 0, 20, 0) < 20 || h.readUInt32BE(0) !== 0x7f454c46) return false;
  } finally {
    fs.closeSync(fd);
  }
  return want === undefined || (h[5] === 2 ? h.readUInt16BE(18) : h.readUInt16LE(18)) === want;
}

/** Why this kernel can't take the switch (undefined: it can): the one wording status and doctor use. */
export function switchImpossible(k: BpfKernelFacts): string | undefined {
  if (!k.objects) return 'this smc-bpf cannot open its own BPF objects: a broken build, rebuild it with npm run build';
  if (!k.btf) return 'no BTF';
  if (!k.hook) return 'no update_socket_protocol hook, Linux 6.6+';
  return undefined;
}

/** Runs smc-bpf; ns (when given) is its fd 3, named /proc/self/fd/3 on its command line. */
function run<T>(args: string[], ns?: NetnsHandle): T {
  const loader = loaderPath();
  if (loader === undefined) {
    throw new BpfSwitchError('ENOTSUP', `the BPF switch is not built for this machine (linux-${process.arch}): no smc-bpf in the package; build it with npm run build (needs clang and libbpf-dev), or start programs with the launcher instead (smc-run PROGRAM)`);
  }
  const argv = ns === undefined ? args : args.map((a) => (a === '@netns' ? '/proc/self/fd/3' : a));
  const stdio: ('ignore' | 'pipe' | number)[] = ['ignore', 'pipe', 'pipe'];
  if (ns !== undefined) stdio.push(ns.fd);
  const r = spawnSync(loader, argv, { stdio, encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw new BpfSwitchError('EINTERNAL', `running ${loader}: ${r.error.message}`);
  if (r.status === 0) return JSON.parse(r.stdout) as T;
  const line = (r.stderr ?? '').trim().split('\n').pop() ?? '';
  const m = /^([A-Z0-9]+) (.*)$/.exec(line);
  // the loader is handed only values this layer checked, so whatever it reports (EINVAL from a kernel
  // refusing a program, too) is the system's answer: exit 1; only its own usage line is a usage error
  if (m?.[1] !== undefined && m[2] !== undefined) throw new BpfSwitchError(m[1], m[2], m[1] === 'EUSAGE');
  throw new BpfSwitchError('EINTERNAL', `${loader} ${args[0]} failed (status ${r.status ?? r.signal}): ${line || 'no message'}`);
}

export const probeKernel = (): BpfKernelFacts => run<BpfKernelFacts>(['probe']);
/** Switches the namespace; with a policy (encodePolicy) its connections are decided by it, without one a policy set before is cleared. */
export const enableNamespace = (ns: NetnsHandle, policy?: Buffer): EnableResult =>
  run<EnableResult>(policy ? ['enable', '@netns', policy.toString('hex')] : ['enable', '@netns'], ns);
export const disableNamespace = (ns: NetnsHandle): DisableResult => run<DisableResult>(['disable', '@netns'], ns);
/** Removes a namespace's entry by its cookie: for a namespace that may be gone (a container's, after it stopped). */
export const disableCookie = (cookie: string): DisableResult => run<DisableResult>(['disable', `cookie:${cookie}`]);
export const disableAll = (): { removed: number } => run<{ removed: number }>(['disable-all']);
/** Switches the sockets created by tasks in the cgroup v2 directory dir, or below it; a policy as for enableNamespace. */
export const enableCgroup = (dir: string, policy?: Buffer): { cgroup: string; already: boolean; policy: boolean } =>
  run(policy ? ['enable-cgroup', dir, policy.toString('hex')] : ['enable-cgroup', dir]);
export const disableCgroup = (dir: string): { cgroup: string; was: boolean; switched: number; left: number } => run(['disable-cgroup', dir]);
/** Removes a cgroup's entry by its id: for a cgroup that may be gone (a container's, after it stopped). */
export const disableCgroupId = (id: string): { cgroup: string; was: boolean; switched: number; left: number } => run(['disable-cgroup', `id:${id}`]);

export interface SwitchedCgroup {
  /** the cgroup id: the directory's file handle (its inode number in /sys/fs/cgroup on 64-bit hosts) */
  id: string;
  /** TCP sockets the switch turned into SMC sockets for its tasks so far */
  switched: number;
  /** its directory, when it still exists and the loader could tell */
  path?: string;
  /** its directory was removed (the entry goes at the next enable or disable of a cgroup) */
  removed?: boolean;
  policy?: KernelPolicy;
}

export interface SwitchStatus { loaded: boolean; policyLoaded: boolean; namespaces: SwitchedNamespace[]; cgroups: SwitchedCgroup[] }

type WithHexPolicy<T> = Omit<T, 'policy'> & { policy?: string };
const decoded = <T extends { policy?: KernelPolicy }>({ policy, ...rest }: WithHexPolicy<T>): T =>
  (policy === undefined ? rest : { ...rest, policy: decodePolicy(Buffer.from(policy, 'hex')) }) as T;

export function switchStatus(): SwitchStatus {
  const st = run<{ loaded: boolean; policyLoaded: boolean; namespaces: WithHexPolicy<SwitchedNamespace>[]; cgroups?: WithHexPolicy<SwitchedCgroup>[] }>(['status']);
  return { ...st, namespaces: st.namespaces.map((n) => decoded<SwitchedNamespace>(n)), cgroups: (st.cgroups ?? []).map((c) => decoded<SwitchedCgroup>(c)) };
}
