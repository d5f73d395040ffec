// Real OCI containers for the SMC-D guest: a network namespace joined to the guest by a veth pair, the
// guest's root bind-mounted read-only as the rootfs, and the two runtimes users run (crun with a bundle,
// podman with --rootfs). The runtimes come from Debian (the lane installs crun and podman on the host,
// whose root the guest boots from).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'vitest';
import { REPO, run } from './run';

async function must(cmd: string, args: string[]): Promise<string> {
  const r = await run(cmd, args);
  expect(r.code, `${cmd} ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

/** A network namespace with a veth pair to the guest: guestIp (in the guest) and ctrIp (inside), both /24. */
export interface ContainerNet {
  name: string;
  path: string;
  guestIp: string;
  ctrIp: string;
  remove(): Promise<void>;
}

export async function containerNet(name: string, subnet: string): Promise<ContainerNet> {
  const guestIp = `${subnet}.1`;
  const ctrIp = `${subnet}.2`;
  const host = `vh-${name}`.slice(0, 15);
  await must('ip', ['netns', 'add', name]);
  await must('ip', ['link', 'add', host, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', name]);
  await must('ip', ['addr', 'add', `${guestIp}/24`, 'dev', host]);
  await must('ip', ['link', 'set', host, 'up']);
  await must('ip', ['-n', name, 'addr', 'add', `${ctrIp}/24`, 'dev', 'eth0']);
  await must('ip', ['-n', name, 'link', 'set', 'eth0', 'up']);
  await must('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
  return {
    name,
    path: `/run/netns/${name}`,
    guestIp,
    ctrIp,
    remove: async () => {
      await run('ip', ['link', 'del', host]);
      await run('ip', ['netns', 'del', name]);
    },
  };
}

/** The guest's root, bind-mounted (not recursively) on a directory of its own: a rootfs for both runtimes. */
export async function guestRootfs(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-rootfs-'));
  await must('mount', ['--bind', '/', dir]);
  return {
    dir,
    remove: async () => {
      await run('umount', [dir]);
      fs.rmdirSync(dir);
    },
  };
}

/**
 * The mounts a Node program of the repo needs in a container whose rootfs is the guest's root: fresh
 * proc/dev/sys, a private /tmp, and the repo itself (mounted over /tmp's tmpfs when the repo lives there).
 */
function ociMounts(): object[] {
  return [
    { destination: '/proc', type: 'proc', source: 'proc' },
    { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'] },
    { destination: '/dev/pts', type: 'devpts', source: 'devpts', options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620'] },
    { destination: '/dev/shm', type: 'tmpfs', source: 'shm', options: ['nosuid', 'noexec', 'nodev', 'mode=1777', 'size=65536k'] },
    { destination: '/sys', type: 'sysfs', source: 'sysfs', options: ['nosuid', 'noexec', 'nodev', 'ro'] },
    { destination: '/tmp', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'nodev', 'mode=1777'] },
    { destination: REPO, type: 'bind', source: REPO, options: ['rbind', 'ro'] },
  ];
}

/** An OCI bundle (config.json) that runs args in the network namespace at netnsPath with those sysctls. */
export function writeOciBundle(dir: string, o: { args: string[]; rootfs: string; netnsPath: string; sysctl: Record<string, string> }): void {
  const caps = ['CAP_CHOWN', 'CAP_DAC_OVERRIDE', 'CAP_FOWNER', 'CAP_KILL', 'CAP_NET_BIND_SERVICE', 'CAP_SETGID', 'CAP_SETUID'];
  const config = {
    ociVersion: '1.0.2',
    process: {
      terminal: false,
      user: { uid: 0, gid: 0 },
      args: o.args,
      env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'HOME=/tmp', 'LANG=C.UTF-8'],
      cwd: REPO,
      capabilities: { bounding: caps, effective: caps, permitted: caps },
      noNewPrivileges: true,
    },
    root: { path: o.rootfs, readonly: true },
    hostname: 'smc-ctr',
    mounts: ociMounts(),
    linux: {
      namespaces: [{ type: 'pid' }, { type: 'mount' }, { type: 'ipc' }, { type: 'uts' }, { type: 'network', path: o.netnsPath }],
      sysctl: o.sysctl,
    },
  };
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config, null, 2));
}

/** Waits (up to 60 s) until no process has text in its command line. */
async function waitUntilNoProcessMentions(text: string): Promise<void> {
  const mentions = (pid: string): boolean => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
    } catch {
      return false; // gone meanwhile
    }
  };
  for (let i = 0; i < 600; i++) {
    if (!fs.readdirSync('/proc').some((p) => /^\d+$/.test(p) && mentions(p))) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`processes still use ${text} after 60 s`);
}

/** One container runtime as the tests drive it: start a program, run a command inside, find the init PID. */
export interface Runtime {
  name: 'crun' | 'podman';
  /** the command line that runs argv in container id (foreground; stdout is the program's) */
  command(id: string, argv: string[]): string[];
  exec(id: string, argv: string[]): Promise<string>;
  /** the container's first process, as the guest sees it */
  pid(id: string): Promise<number>;
  remove(id: string): Promise<void>;
  /** resolves once nothing of the runtime uses its state any more (after remove and the program's exit) */
  settled(): Promise<void>;
}

export function crun(o: { rootfs: string; net: ContainerNet; sysctl: Record<string, string>; bundles: string }): Runtime {
  return {
    name: 'crun',
    command(id, argv) {
      const dir = path.join(o.bundles, id);
      writeOciBundle(dir, { args: argv, rootfs: o.rootfs, netnsPath: o.net.path, sysctl: o.sysctl });
      return ['crun', 'run', '--bundle', dir, id];
    },
    exec: (id, argv) => must('crun', ['exec', id, ...argv]),
    pid: async (id) => (JSON.parse(await must('crun', ['state', id])) as { pid: number }).pid,
    remove: async (id) => {
      await run('crun', ['kill', id, 'KILL']);
      await run('crun', ['delete', '--force', id]);
    },
    settled: async () => undefined,
  };
}

/**
 * podman as root with its state in a temp dir, no image (--rootfs), no network of its own (the prepared
 * namespace), no cgroup of its own (the guest kernel has cgroup2 but no controllers) and no seccomp filter
 * (the guest kernel has no CONFIG_SECCOMP). sysctlArgs: `smc-run sysctl export --format podman`'s options.
 */
/**
 * podman with its state under o.state. o.net: the container's own namespace (--network=ns:PATH); without
 * it the host's (--network=host), and then with its own cgroup (podman's cgroupfs manager), as a
 * host-network container has. o.hooksDir: hooks.d for this podman (--hooks-dir); o.runArgs go to `run`.
 */
export function podman(o: { rootfs: string; net?: ContainerNet; sysctlArgs: string[]; state: string; hooksDir?: string; runArgs?: string[] }): Runtime {
  // vfs storage: --rootfs needs no image layers, and vfs mounts nothing that could outlive the test
  const global = ['--root', path.join(o.state, 'root'), '--runroot', path.join(o.state, 'run'), '--tmpdir', path.join(o.state, 'tmp'),
    '--storage-driver', 'vfs', '--cgroup-manager', 'cgroupfs', '--events-backend', 'none', ...(o.hooksDir ? ['--hooks-dir', o.hooksDir] : [])];
  const network = o.net ? [`--network=ns:${o.net.path}`, '--cgroups', 'disabled'] : ['--network=host'];
  return {
    name: 'podman',
    command: (id, argv) => [
      'podman', ...global, 'run', '--rm', '--name', id, ...network, ...(o.runArgs ?? []), '--security-opt', 'seccomp=unconfined',
      // notmpcopyup: podman's tmpfs mounts copy what the rootfs has there by default, and this rootfs's /tmp
      // is the 9p share of the host's /tmp: the copy took minutes when the host's /tmp was large, and failed
      // the start ("stat tmp/cc....s: No such file or directory", exit 127) when a file vanished mid-copy
      // (a kernel build's compiler temp file, in CI). --read-only-tmpfs=false: no such copies for /var/tmp.
      ...o.sysctlArgs, '--read-only', '--read-only-tmpfs=false', '--tmpfs', '/tmp:notmpcopyup', '--tmpfs', '/run:notmpcopyup',
      '-v', `${REPO}:${REPO}:ro`, '--workdir', REPO,
      // --rootfs is a switch: the rootfs path is the first argument, where an image would be
      '--rootfs', o.rootfs, ...argv,
    ],
    exec: (id, argv) => must('podman', [...global, 'exec', id, ...argv]),
    pid: async (id) => Number((await must('podman', [...global, 'inspect', '--format', '{{.State.Pid}}', id])).trim()),
    remove: async (id) => {
      await run('podman', [...global, 'rm', '--force', id]);
    },
    // conmon starts `podman container cleanup` (with --root in the state dir) on its own when the container
    // exits: the state dir is free only once no podman process of it is left
    settled: () => waitUntilNoProcessMentions(o.state),
  };
}
