// Containers for real (SMC-D guest, 6.12 with cgroup2): the sysctl export consumed by the runtimes users run
// and `--target` on a container's process. For crun (an OCI bundle whose linux.sysctl is `sysctl export
// --format oci`) and podman (`run --sysctl` from `sysctl export --format podman`), each in a network namespace
// joined to the guest by a veth pair, rootfs the guest's root read-only:
// - inside, /proc/sys/net/smc holds the exported values while the guest keeps its own;
// - a Node server under smc-run inside and a client outside are SMC-D on both ends;
// - from outside, `stats sockets --target PID` shows the container's connection and its process,
//   `sysctl set --target PID` changes only the container, `stats system --target PID` counts only it.
// Then the bad --target inputs of a container-shaped setup, each one line with nothing changed.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerNet, crun, guestRootfs, podman, type ContainerNet, type Runtime } from '../../helpers/container';
import { echoClient, startEchoServer, waitForConns, type EchoServer } from '../../helpers/echo';
import { BIN, EXPECT_MODE, run, smcRun, spawnJsonLines } from '../../helpers/run';
import { waitForFdOn, waitInNamespace } from '../../helpers/netns';

/** What the containers get: values a fresh namespace never has (6.12 defaults: 65536 each). */
const SETTINGS = ['autocorking_size=0', 'wmem=262144', 'rmem=131072'];
const EXPECTED: Record<string, string> = { autocorking_size: '0', wmem: '262144', rmem: '131072' };
const NAMES = Object.keys(EXPECTED);

const readGuest = (name: string): string => fs.readFileSync(`/proc/sys/net/smc/${name}`, 'utf8').trim();

async function json<T>(args: string[]): Promise<T> {
  const r = await smcRun([...args, '--json']);
  expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as T;
}

interface SocketRow {
  mode: string;
  state: string;
  local: { address: string; port: number };
  remote: { address: string; port: number };
  owners?: { pid: number; command: string }[];
}
interface SmcdConns {
  clientV1: number;
  clientV2: number;
  serverV1: number;
  serverV2: number;
}
const smcdConnections = async (args: string[]): Promise<SmcdConns> =>
  (await json<{ system: { smcd: { connections: SmcdConns } } }>(['stats', 'system', ...args])).system.smcd.connections;

type Setup = (rootfs: string, net: ContainerNet, state: string) => Promise<Runtime>;

/** The runtimes, each given what `smc-run sysctl export` printed for it. */
const RUNTIMES: { name: string; subnet: string; setup: Setup }[] = [
  {
    name: 'crun',
    subnet: '10.77.31',
    setup: async (rootfs, net, state) => {
      const spec = await json<{ text: string }>(['sysctl', 'export', '--format', 'oci', ...SETTINGS]);
      const sysctl = (JSON.parse(spec.text) as { linux: { sysctl: Record<string, string> } }).linux.sysctl;
      return crun({ rootfs, net, sysctl, bundles: state });
    },
  },
  {
    name: 'podman',
    subnet: '10.77.32',
    setup: async (rootfs, net, state) => {
      const r = await smcRun(['sysctl', 'export', '--format', 'podman', ...SETTINGS]);
      expect(r.code, r.stderr).toBe(0);
      return podman({ rootfs, net, sysctlArgs: r.stdout.split('\n').filter(Boolean), state });
    },
  },
];

describe.runIf(EXPECT_MODE === 'smcd')('containers run by real runtimes', () => {
  let rootfs: Awaited<ReturnType<typeof guestRootfs>>;
  const guestBefore: Record<string, string> = {};

  beforeAll(async () => {
    rootfs = await guestRootfs();
    for (const n of [...NAMES, 'autocorking_size']) guestBefore[n] = readGuest(n);
  });
  afterAll(async () => {
    await rootfs?.remove();
    // no container run left a trace in the guest's own namespace
    for (const n of NAMES) expect(readGuest(n)).toBe(guestBefore[n]);
  });

  describe.each(RUNTIMES)('$name', ({ name, subnet, setup }) => {
    const id = `smcrun-${name}-${process.pid}`;
    let net: ContainerNet;
    let state: string;
    let rt: Runtime;
    let server: EchoServer | undefined;
    let ctrPid = 0;
    let holder: ReturnType<typeof spawnJsonLines> | undefined;

    beforeAll(async () => {
      net = await containerNet(`smcrun-${name}`, subnet);
      state = fs.mkdtempSync(path.join(os.tmpdir(), `smc-run-${name}-`));
      rt = await setup(rootfs.dir, net, state);
      // argv is `node bin/smc-run node echo.cjs server`: the container runs bin/smc-run itself, as users
      // would (`smc-run node app.js`), and the launcher execs, so the container's first process is the server
      // a first podman run under TCG took more than 60 s in session 6's CI, when podman still copied the
      // host's /tmp into its tmpfs (see podman()); podman sets up its state, conmon and the container
      // before Node starts inside
      server = await startEchoServer(net.ctrIp, { command: (argv) => rt.command(id, argv.slice(1)), startTimeoutMs: 240_000 });
      ctrPid = await rt.pid(id);
    }, 360_000);
    afterAll(async () => {
      holder?.child.kill('SIGTERM');
      await rt?.remove(id);
      await server?.stop();
      await rt?.settled();
      await net?.remove();
      fs.rmSync(state, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    });

    it('inside, /proc/sys/net/smc shows the exported values; the guest keeps its own', async () => {
      for (const n of NAMES) {
        const inside = (await rt.exec(id, ['cat', `/proc/sys/net/smc/${n}`])).trim();
        console.log(`${name}: net.smc.${n} inside ${inside}, guest ${readGuest(n)}`);
        expect(inside).toBe(EXPECTED[n]);
        expect(readGuest(n)).toBe(guestBefore[n]);
        expect(readGuest(n)).not.toBe(EXPECTED[n]);
      }
      // the container is in the prepared namespace, and its first process is the server (smc-run execs)
      expect(fs.statSync(`/proc/${ctrPid}/ns/net`).ino).toBe(fs.statSync(net.path).ino);
      expect(fs.readFileSync(`/proc/${ctrPid}/cmdline`, 'utf8').split('\0')).toContain('server');
    });

    it('a server under smc-run inside and a client outside: SMC-D on both ends, the echo intact', async () => {
      const c = await echoClient(net.ctrIp, server!.port, 1 << 20);
      expect(c.result?.ok, c.run.stderr).toBe(true);
      expect(c.result?.client).toMatchObject({ mode: 'smcd', fallback: null });
      const conns = await waitForConns(server!, 1);
      expect(conns[0]).toMatchObject({ mode: 'smcd', fallback: null });
    });

    it('stats sockets --target PID: the container\'s connection, SMC-D, with its process', async () => {
      holder = spawnJsonLines([BIN, process.execPath, 'test/scenarios/echo.cjs', 'hold', net.ctrIp, String(server!.port), '600000']);
      const held = (await holder.waitFor((l) => 'connected' in l, 120_000)).connected as { mode: string };
      expect(held.mode).toBe('smcd');
      const rows = (await json<{ sockets: SocketRow[] }>(['stats', 'sockets', '-a', '--target', String(ctrPid)])).sockets;
      const conn = rows.find((r) => r.local.port === server!.port && r.remote.port !== 0);
      console.log(`${name}: stats sockets --target ${ctrPid}: ${JSON.stringify(conn)}`);
      expect(conn).toMatchObject({ mode: 'smcd', local: { address: net.ctrIp }, remote: { address: net.guestIp } });
      expect(conn?.owners?.map((o) => o.pid)).toContain(ctrPid);
      // --pid narrows to that process: the same connection and the listener, nothing of another process
      const mine = (await json<{ sockets: SocketRow[] }>(['stats', 'sockets', '-a', '--target', String(ctrPid), '--pid', String(ctrPid)])).sockets;
      expect(mine.length).toBeGreaterThanOrEqual(2);
      for (const r of mine) expect(r.owners?.map((o) => o.pid)).toContain(ctrPid);
      // the guest's own namespace has the client end only, never the container's server end
      const guest = (await json<{ sockets: SocketRow[] }>(['stats', 'sockets', '-a'])).sockets;
      expect(guest.some((r) => r.local.port === server!.port)).toBe(false);
      expect(guest.some((r) => r.remote.port === server!.port && r.mode === 'smcd')).toBe(true);
    });

    it('stats system --target PID counts the container\'s connections only', async () => {
      const inCtr = await smcdConnections(['--target', String(ctrPid)]);
      console.log(`${name}: SMC-D connections in the container ${JSON.stringify(inCtr)}, in the guest ${JSON.stringify(await smcdConnections([]))}`);
      // the echo and the held connection, both accepted in there; no client ever ran in there
      expect(inCtr).toEqual({ clientV1: 0, clientV2: 0, serverV1: 0, serverV2: 2 });
      const guest = await smcdConnections([]);
      expect(guest.clientV2).toBeGreaterThanOrEqual(2);
    });

    it('sysctl set --target PID changes the container only (read back inside and outside)', async () => {
      const { changes } = await json<{ changes: { name: string; key: string; old: number; new: number }[] }>(['sysctl', 'set', '--target', String(ctrPid), 'autocorking_size=4096']);
      expect(changes).toEqual([{ name: 'autocorking_size', key: 'net.smc.autocorking_size', old: 0, new: 4096 }]);
      expect((await rt.exec(id, ['cat', '/proc/sys/net/smc/autocorking_size'])).trim()).toBe('4096');
      expect(readGuest('autocorking_size')).toBe(guestBefore.autocorking_size);
      const back = await json<{ sysctls: { name: string; value: number }[] }>(['sysctl', 'get', '--target', String(ctrPid), 'autocorking_size']);
      expect(back.sysctls).toEqual([expect.objectContaining({ name: 'autocorking_size', value: 4096 })]);
    });
  });
});

describe.runIf(EXPECT_MODE === 'smcd')('bad --target input around a container: one line, nothing changed', () => {
  const ns = `smcrun-badtarget-${process.pid}`;
  const inNs = (name: string): Promise<string> => run('ip', ['netns', 'exec', ns, 'cat', `/proc/sys/net/smc/${name}`]).then((r) => r.stdout.trim());

  beforeAll(async () => {
    expect((await run('ip', ['netns', 'add', ns])).code).toBe(0);
  });
  afterAll(async () => {
    await run('ip', ['netns', 'del', ns]);
  });

  it('a --target that exits mid-command: exit 1, one line, its namespace unchanged', async () => {
    const target = spawn('ip', ['netns', 'exec', ns, 'sleep', '600'], { stdio: 'ignore' });
    await waitInNamespace(target.pid!, `/run/netns/${ns}`);
    const nsIno = fs.statSync(`/run/netns/${ns}`).ino;
    const before = await inNs('autocorking_size');
    // the test hook holds the command for 10 s right after it opened the namespace: once its fd is there,
    // the target ends
    const child = spawn(BIN, ['sysctl', 'set', '--target', String(target.pid), 'autocorking_size=1234', '--json'], {
      env: { ...process.env, SMC_RUN_TEST_NETNS_HOLD_MS: '10000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const cmd = new Promise<{ code: number | null; stdout: string; stderr: string }>((r) => child.on('close', (code) => r({ code, stdout, stderr })));
    await waitForFdOn(child.pid!, `net:[${nsIno}]`);
    target.kill('SIGKILL');
    const r = await cmd;
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({ error: { code: 'ESRCH', message: `PID ${target.pid} exited while the command ran (its network namespace was left unchanged)` } });
    expect(r.stderr).toBe('');
    expect(await inNs('autocorking_size')).toBe(before);
    expect(before).not.toBe('1234');
  });

  it('--target of a host-namespace process together with --netns: usage error (exit 2), nothing changed', async () => {
    const before = readGuest('autocorking_size');
    const r = await smcRun(['sysctl', 'set', '--target', '1', '--netns', ns, 'autocorking_size=2048']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual(['smc-run: give either --target PID or --netns PATH|NAME, not both']);
    expect(readGuest('autocorking_size')).toBe(before);
    expect(await inNs('autocorking_size')).not.toBe('2048');
  });
});
