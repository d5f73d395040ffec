// The OCI hook with podman (lane smcd-newest): `smc-run oci-hook install` writes the hooks.d file, podman
// (--hooks-dir) runs it through crun at createRuntime and poststop. Two containers from the same rootfs run
// a plain `node echo.cjs server` (no smc-run inside, nothing in their environment), one annotated
// io.smc-run/enable=true with a sysctl, one not: only the annotated one's server is SMC-D to a client
// outside (both ends), only its namespace has the sysctl, `stats serve --containers` reads it labelled by
// its pod, and once it stops nothing of it is switched or recorded. A host-network container annotated the same way is switched by its cgroup; a program beside it
// in the same (host) namespace is not. A bad annotation leaves its container running on TCP; with
// io.smc-run/required it does not start. The containers of one pod switching and unswitching side by
// side keep one switch while any of them runs; a hook killed half-way leaves what poststop undoes.
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerNet, guestRootfs, podman, type ContainerNet, type Runtime } from '../../helpers/container';
import { echoClient, startEchoServer, waitForConns, type EchoServer } from '../../helpers/echo';
import { recordsDir } from '../../../src/oci/records';
import { BIN, EXPECT_MODE, REPO, run, smcRun } from '../../helpers/run';

const SLOW = 600_000;
const PROTO = 'import socket; s = socket.socket(); print(s.getsockopt(socket.SOL_SOCKET, socket.SO_PROTOCOL))';
const ann = (pairs: Record<string, string>): string[] => Object.entries(pairs).flatMap(([k, v]) => ['--annotation', `${k}=${v}`]);

interface Status { namespaces: { inode: number; cookie: string; containers: { id: string }[] }[]; cgroups: { id: string; path?: string; containers: { id: string }[]; switched: number }[]; loaded: boolean }
/** One scrape of an exporter started with --listen 127.0.0.1:0 (its URL is in its start log line). */
async function scrape(exporter: ReturnType<typeof spawn>): Promise<string> {
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    const t = setTimeout(() => reject(new Error(`the exporter did not start: ${err}`)), 60_000);
    exporter.stderr!.on('data', (d) => {
      err += d;
      const m = /"url":"([^"]+)"/.exec(err);
      if (m) {
        clearTimeout(t);
        resolve(m[1]!);
      }
    });
  });
  return (await fetch(url)).text();
}

const status = async (): Promise<Status> => JSON.parse((await smcRun(['status', '--json'])).stdout) as Status;
const sysctlIn = async (ns: string): Promise<string> => (await run('ip', ['netns', 'exec', ns, 'cat', '/proc/sys/net/smc/autocorking_size'])).stdout.trim();

describe.runIf(EXPECT_MODE === 'smcd')('the OCI hook with podman (annotations)', () => {
  let rootfs: Awaited<ReturnType<typeof guestRootfs>>;
  let state = '';
  let hooks = '';
  let netA: ContainerNet;
  let netB: ContainerNet;
  const servers: EchoServer[] = [];
  const runtimes: Runtime[] = [];
  let records = '';
  const hookLog = (): string => {
    try {
      return fs.readFileSync(path.join(records, 'hook.log'), 'utf8');
    } catch {
      return '(no hook.log)';
    }
  };

  beforeAll(async () => {
    rootfs = await guestRootfs();
    state = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-oci-'));
    hooks = path.join(state, 'hooks.d');
    // the guest's root (and so root's ~/.cache) is the host's, read-only: the records go to a cache dir of
    // this run, which install hands to the hook (its XDG_CACHE_HOME) and `smc-run status` reads too
    process.env.XDG_CACHE_HOME = path.join(state, 'cache');
    records = recordsDir();
    netA = await containerNet('smcrun-oci-a', '10.77.46');
    netB = await containerNet('smcrun-oci-b', '10.77.47');
    await smcRun(['disable', '--all']);
    const i = await smcRun(['oci-hook', 'install', '--dir', hooks, '--json']);
    expect(i.code, i.stderr).toBe(0);
    expect(JSON.parse(i.stdout)).toEqual({ installed: path.join(hooks, 'smc-run.json') });
  }, SLOW);

  afterAll(async () => {
    for (const s of servers) await s.stop();
    for (const rt of runtimes) await rt.settled();
    await smcRun(['disable', '--all']);
    await netA?.remove();
    await netB?.remove();
    await rootfs?.remove();
    fs.rmSync(state, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }, SLOW);

  const podmanIn = (net: ContainerNet | undefined, runArgs: string[]): Runtime => {
    const rt = podman({ rootfs: rootfs.dir, net, sysctlArgs: [], state: path.join(state, `p${runtimes.length}`), hooksDir: hooks, runArgs });
    runtimes.push(rt);
    return rt;
  };

  it('two containers, one annotated: only its server is SMC-D (both ends) and has its sysctl; stopped, nothing of it is left', async () => {
    const before = await sysctlIn(netB.name);
    const a = podmanIn(netA, ann({ 'io.smc-run/enable': 'true', 'io.smc-run/sysctls': 'autocorking_size=32768', 'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'shop' }));
    const b = podmanIn(netB, []);
    const sa = await startEchoServer(netA.ctrIp, { launcher: false, command: (argv) => a.command(`smcrun-oci-a-${process.pid}`, argv), startTimeoutMs: 240_000 });
    servers.push(sa);
    const sb = await startEchoServer(netB.ctrIp, { launcher: false, command: (argv) => b.command(`smcrun-oci-b-${process.pid}`, argv), startTimeoutMs: 240_000 });
    servers.push(sb);

    const ca = await echoClient(netA.ctrIp, sa.port, 65536);
    expect(ca.result?.ok, ca.run.stderr).toBe(true);
    expect(ca.result?.client, hookLog()).toMatchObject({ mode: 'smcd' });
    expect((await waitForConns(sa, 1))[0]).toMatchObject({ mode: 'smcd' });
    const cb = await echoClient(netB.ctrIp, sb.port, 65536);
    expect(cb.result?.ok, cb.run.stderr).toBe(true);
    expect(cb.result?.client?.mode).not.toBe('smcd');
    expect((await waitForConns(sb, 1))[0]).toMatchObject({ mode: 'tcp' });

    expect(await sysctlIn(netA.name)).toBe('32768');
    expect(await sysctlIn(netB.name)).toBe(before);
    const inodeA = fs.statSync(netA.path).ino;
    const st = await status();
    expect(st.namespaces.map((n) => n.inode)).toEqual([inodeA]);
    expect(st.namespaces[0]?.containers).toEqual([{ id: expect.stringMatching(/^[0-9a-f]{64}$/), pod: { name: 'web', namespace: 'shop' } }]);
    expect((await smcRun(['status'])).stdout).toMatch(/shop\/web/);

    // the exporter finds the pod's namespace through the hook's records, labelled by the pod
    const exporter = spawn(process.execPath, [BIN, 'stats', 'serve', '--containers', '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      const body = await scrape(exporter);
      expect(body).toMatch(/^smc_up\{netns="pod:shop\/web"\} 1$/m);
      expect(body).toMatch(/^smc_container_info\{netns="pod:shop\/web",container_id="[0-9a-f]{64}",pod="web",pod_namespace="shop",container=""\} 1$/m);
      // the SMC-D connection to the annotated server, counted in the pod's namespace; the plain container's is not read
      expect(body).toMatch(/^smc_handshakes_total\{netns="pod:shop\/web",mode="smcd",side="server"[^}]*\} [1-9]/m);
      expect(body).not.toMatch(/netns="self"/);
    } finally {
      exporter.kill();
    }

    // stop the annotated container: poststop undoes the switch and its record
    await sa.stop();
    servers.splice(servers.indexOf(sa), 1);
    await a.settled();
    const after = await status();
    expect(after.namespaces).toEqual([]);
    expect(after.loaded).toBe(false);
    expect(fs.existsSync(records) ? fs.readdirSync(records).filter((f) => f.endsWith('.json')) : [], hookLog()).toEqual([]);
  }, SLOW);

  it('a host-network container annotated: switched by its cgroup, its neighbour in the same namespace is not; stopped, the cgroup entry goes', async () => {
    // --pids-limit=-1: podman's default limit needs the pids controller, which the guest's kernel leaves out
    const c = podmanIn(undefined, ['--pids-limit=-1', ...ann({ 'io.smc-run/enable': 'true' })]);
    const argv = c.command(`smcrun-oci-h-${process.pid}`, ['sh', '-c', `python3 -c '${PROTO}'; sleep 4`]);
    const running = run(argv[0]!, argv.slice(1));
    // while it runs: one cgroup switched (podman's for it), named with the container, no namespace
    let seen: Status | undefined;
    for (let i = 0; i < 100 && (seen?.cgroups.length ?? 0) === 0; i++) {
      seen = await status();
      if (seen.cgroups.length === 0) await new Promise((res) => setTimeout(res, 100));
    }
    expect(seen?.namespaces).toEqual([]);
    expect(seen?.cgroups).toEqual([expect.objectContaining({ path: expect.stringMatching(/^\/sys\/fs\/cgroup\/.+/), containers: [{ id: expect.stringMatching(/^[0-9a-f]{64}$/) }] })]);
    const r = await running;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('256');
    const beside = await run('python3', ['-c', PROTO]);
    expect(beside.stdout.trim()).toBe('6');
    await c.settled();
    expect((await status()).cgroups).toEqual([]);
  }, SLOW);

  it('a bad annotation: the container runs unswitched; with io.smc-run/required it does not start', async () => {
    const bad = podmanIn(netB, ann({ 'io.smc-run/enable': 'true', 'io.smc-run/exclude': '10.0.0.0/33' }));
    const argv = bad.command(`smcrun-oci-bad-${process.pid}`, ['python3', '-c', PROTO]);
    const r = await run(argv[0]!, argv.slice(1));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('6');
    // crun keeps a hook's stderr to itself: the line is in hook.log beside the records
    expect(hookLog().trim().split('\n').pop()).toMatch(/smc-run oci-hook: container [0-9a-f]{12}: io\.smc-run\/exclude: .*; the container runs on TCP$/);
    expect((await status()).namespaces).toEqual([]);
    const req = podmanIn(netB, ann({ 'io.smc-run/enable': 'true', 'io.smc-run/required': 'true', 'io.smc-run/sysctls': 'no_such_sysctl=1' }));
    const argv2 = req.command(`smcrun-oci-req-${process.pid}`, ['python3', '-c', PROTO]);
    const r2 = await run(argv2[0]!, argv2.slice(1));
    expect(r2.code).not.toBe(0);
    expect(r2.stdout.trim()).toBe('');
    expect(r2.stderr).toMatch(/error executing hook .*smc-run/);
    expect(hookLog().trim().split('\n').pop()).toMatch(/no_such_sysctl.*the container does not start \(io\.smc-run\/required\)$/);
  }, SLOW);

  it('the containers of a pod starting and stopping side by side: one switch, held while any of them runs, gone with the last; a hook killed after its switch frees the lock and leaves what poststop undoes', async () => {
    // processes in netA's namespace stand in for the containers of one pod: the hook reads only the state
    const sleepers = Array.from({ length: 6 }, () => spawn('ip', ['netns', 'exec', netA.name, 'sleep', '600'], { stdio: 'ignore' }));
    const stateOf = (id: string, st: string, pid?: number): string =>
      JSON.stringify({ ociVersion: '1.0.2', id, status: st, pid, annotations: { 'io.smc-run/enable': 'true', 'io.kubernetes.pod.name': 'db', 'io.kubernetes.pod.namespace': 'shop' } });
    const hook = async (id: string, st: string, pid?: number): Promise<void> => {
      const r = await run(BIN, ['oci-hook'], {}, { input: stateOf(id, st, pid) });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr, hookLog()).toBe('');
    };
    const inodeA = fs.statSync(netA.path).ino;
    const inA = async (): Promise<string[] | undefined> => (await status()).namespaces.find((n) => n.inode === inodeA)?.containers.map((c) => c.id).sort();
    const recorded = (): string[] => (fs.existsSync(records) ? fs.readdirSync(records).filter((f) => f.endsWith('.json')).sort() : []);
    const proto = async (): Promise<string> => (await run('ip', ['netns', 'exec', netA.name, 'python3', '-c', PROTO])).stdout.trim();
    try {
      // each in the pod's namespace before its hook runs (else the hook would see a host-network container)
      for (const p of sleepers) {
        for (let i = 0; i < 300; i++) {
          try {
            if (fs.statSync(`/proc/${p.pid}/ns/net`).ino === inodeA) break;
          } catch {
            /* not started yet */
          }
          await new Promise((res) => setTimeout(res, 50));
        }
        expect(fs.statSync(`/proc/${p.pid}/ns/net`).ino).toBe(inodeA);
      }
      const ids = sleepers.map((_, i) => `pod-c${i}`);
      for (let round = 0; round < 2; round++) {
        await Promise.all(ids.slice(0, 4).map((id, i) => hook(id, 'creating', sleepers[i]!.pid)));
        expect(await inA()).toEqual(ids.slice(0, 4));
        // three stop while a fifth starts: switched for the two left
        await Promise.all([...ids.slice(0, 3).map((id) => hook(id, 'stopped')), hook(ids[4]!, 'creating', sleepers[4]!.pid)]);
        expect(await inA()).toEqual([ids[3], ids[4]]);
        expect(await proto()).toBe('256');
        // the last two stop side by side: nothing of the pod is left
        await Promise.all([hook(ids[3]!, 'stopped'), hook(ids[4]!, 'stopped')]);
        expect(await inA()).toBeUndefined();
        expect(recorded()).toEqual([]);
        expect(await proto()).toBe('6');
      }

      // a hook killed while it holds the lock, after its switch (SMC_RUN_TEST_OCI_HOLD_MS holds it there)
      const killed = spawn(BIN, ['oci-hook'], { env: { ...process.env, SMC_RUN_TEST_OCI_HOLD_MS: '600000' }, stdio: ['pipe', 'ignore', 'ignore'] });
      killed.stdin.end(stateOf('pod-killed', 'creating', sleepers[5]!.pid));
      let seen: string[] | undefined;
      for (let i = 0; i < 300 && seen === undefined; i++) {
        seen = await inA();
        if (seen === undefined) await new Promise((res) => setTimeout(res, 200));
      }
      expect(seen).toEqual(['pod-killed']);
      killed.kill('SIGKILL');
      await new Promise((res) => killed.once('exit', res));
      // status shows what it left: the namespace switched, the container recorded with its cookie
      expect(recorded()).toEqual(['pod-killed.json']);
      expect(await proto()).toBe('256');
      // the next hook does not wait for the dead one's lock (the wait would be 30 s and a line on stderr)
      const t0 = Date.now();
      await hook(ids[0]!, 'creating', sleepers[0]!.pid);
      expect(await inA()).toEqual([ids[0], 'pod-killed']);
      // the runtime's poststop for the killed hook's container, then the other's: nothing left
      await hook('pod-killed', 'stopped');
      expect(await inA()).toEqual([ids[0]]);
      await hook(ids[0]!, 'stopped');
      expect(await inA()).toBeUndefined();
      expect(recorded()).toEqual([]);
      expect(Date.now() - t0).toBeLessThan(120_000);
    } finally {
      for (const p of sleepers) p.kill('SIGKILL');
    }
  }, SLOW);

  it('the node kit\'s commands as plain processes: node-install.sh copies node and smc-run under PREFIX and points hooks.d at the copy; podman runs that hook; the exporter command serves from the copy', async () => {
    // a production install of the package, as the kit's image has it (npm install -g): no dev dependencies
    const stage = path.join(state, 'pkg');
    for (const p of ['bin', 'dist', 'deploy', 'package.json', 'build/Release']) fs.cpSync(path.join(REPO, p), path.join(stage, p), { recursive: true });
    const deps = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: REPO, encoding: 'utf8' }).split('\n').filter((l) => l.includes('/node_modules/'));
    for (const d of deps) fs.cpSync(d, path.join(stage, path.relative(REPO, d)), { recursive: true });
    const prefix = path.join(state, 'opt-smc-run');
    const kitHooks = path.join(state, 'kit-hooks.d');
    const inst = await run('sh', [path.join(stage, 'deploy', 'node-install.sh')], { HOST_ROOT: '', PREFIX: prefix, HOOKS_DIR: kitHooks });
    expect(inst.code, inst.stderr).toBe(0);
    const def = JSON.parse(fs.readFileSync(path.join(kitHooks, 'smc-run.json'), 'utf8')) as { hook: { path: string; env: string[] } };
    expect(def.hook.path).toBe(`${prefix}/lib/bin/smc-run`);
    expect(def.hook.env[0]).toMatch(new RegExp(`^PATH=${prefix}/bin:`));
    expect(fs.existsSync(path.join(prefix, 'lib', 'node_modules', 'vitest'))).toBe(false);

    const rt = podman({ rootfs: rootfs.dir, net: netB, sysctlArgs: [], state: path.join(state, 'kit'), hooksDir: kitHooks, runArgs: ann({ 'io.smc-run/enable': 'true' }) });
    runtimes.push(rt);
    const argv = rt.command(`smcrun-oci-kit-${process.pid}`, ['python3', '-c', PROTO]);
    const r = await run(argv[0]!, argv.slice(1));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim(), hookLog()).toBe('256');
    await rt.settled();
    expect((await status()).namespaces).toEqual([]);

    // the exporter's command line of the DaemonSet, run from the copy (listening on loopback here)
    const exporter = spawn(`${prefix}/bin/node`, [`${prefix}/lib/bin/smc-run`, 'stats', 'serve', '--containers', '--target', '1', '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      expect(await scrape(exporter)).toMatch(/^smc_up\{netns="pid:1"\} 1$/m);
    } finally {
      exporter.kill();
    }
  }, SLOW);
});
