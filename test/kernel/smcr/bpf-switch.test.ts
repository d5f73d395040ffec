// The BPF switch over SMC-R between the two guests: `smc-run enable` on both ends, then programs that
// were never started under smc-run (a plain Node server in guest b; plain Node, python3, a static C
// client and a raw-syscall one in guest a) connect over SMC-R; each end read through its own guest's sock_diag while the
// connection is open. A second namespace in guest a proves the switch is per namespace, and `disable`
// proves new sockets are TCP again while the data still flows. The cgroup scope (`enable --cgroup`):
// two long-running programs in guest a's one namespace, started before it was enabled, one in the
// cgroup (its forked children too) and one not: only the first's new connections are SMC-R, both ends.
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listSmcSockets } from '../../../src/stats/sockets';
import { PEER_IP, PEER_IP6, peer, peerConns, startPeerServer } from '../../helpers/peer';
import { buildFixture, ends, jsonLines, tempDir } from '../../helpers/preload-lib';
import { BIN, EXPECT_MODE, run, smcRun, SCENARIOS } from '../../helpers/run';

interface Row { mode: string; local: { address: string; port: number }; remote: { address: string; port: number }; owners?: { command: string }[] }
const rowsOf = (stdout: string): Row[] => (JSON.parse(stdout) as { sockets: Row[] }).sockets;

const NS = 'smcrun-bpf';
const ECHO = path.join(SCENARIOS, 'echo.cjs');

/** python3: connect, send 64 KiB, read the echo; the socket and whether the echo was intact. */
const PY_ECHO = `
import socket, sys, os, time
def echo(host, port):
    s = socket.create_connection((host, port)); data = os.urandom(65536); s.sendall(data); got = b''
    while len(got) < len(data):
        b = s.recv(65536)
        if not b: break
        got += b
    return s, got == data
`;

/** python3 with no smc-run anywhere: one echo, the connection held 2 s. */
const PY_CLIENT = `${PY_ECHO}
s, ok = echo(sys.argv[1], int(sys.argv[2]))
proto = s.getsockopt(socket.SOL_SOCKET, socket.SO_PROTOCOL)
time.sleep(2); s.close()
print('{"python":true,"ok":%s,"protocol":%d}' % ('true' if ok else 'false', proto))
`;

/** Spawns argv and resolves once a line of its stdout matches re (the child goes on). */
function untilLine(argv: string[], re: RegExp): Promise<{ match: RegExpExecArray; out: () => string; done: Promise<number | null> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] ?? '', argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const done = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${argv.join(' ')}: no ${re} in 60 s: ${out} ${err}`)); }, 60_000);
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', (d) => {
      out += d;
      const m = re.exec(out);
      if (m) { clearTimeout(timer); resolve({ match: m, out: () => out + err, done }); }
    });
    void done.then((code) => { clearTimeout(timer); reject(new Error(`${argv.join(' ')} exited ${code} first: ${out} ${err}`)); });
  });
}

/**
 * A long-running python3 (no smc-run anywhere): for each line on stdin it forks a child, and parent and
 * child each connect, send 64 KiB, read the echo and hold the connection 2 s; prints one line per
 * connection ({"tag","ok","protocol"}), then {"done":true}.
 */
const PY_ROUNDS = `${PY_ECHO}
host, port = sys.argv[1], int(sys.argv[2])
def once(tag):
    s, ok = echo(host, port)
    proto = s.getsockopt(socket.SOL_SOCKET, socket.SO_PROTOCOL)
    time.sleep(2); s.close()
    print('{"tag":"%s","ok":%s,"protocol":%d}' % (tag, 'true' if ok else 'false', proto), flush=True)
for line in sys.stdin:
    pid = os.fork()
    if pid == 0:
        once('child'); os._exit(0)
    once('parent'); os.waitpid(pid, 0)
    print('{"done":true}', flush=True)
`;

/** One round of a PY_ROUNDS process: the lines it printed for it. */
function round(p: ChildProcessWithoutNullStreams): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no round end in 60 s: ${out}`)), 60_000);
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (!out.includes('"done"')) return;
      clearTimeout(timer);
      p.stdout.off('data', onData);
      resolve(jsonLines(out).filter((j) => 'tag' in j));
    };
    p.stdout.on('data', onData);
    p.stdin.write('go\n');
  });
}

async function peerRun(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return peer<{ code: number; stdout: string; stderr: string }>({ op: 'run', argv });
}

describe.runIf(EXPECT_MODE === 'smcr')('BPF switch over SMC-R (smc-run enable)', () => {
  let dir = '';
  let staticProbe = '';
  let raw = '';
  let port = 0;
  let port6 = 0;

  beforeAll(async () => {
    dir = tempDir();
    staticProbe = buildFixture(dir, 'sockprobe', 'sockprobe-static', ['-static']);
    raw = buildFixture(dir, 'rawconnect', 'rawconnect', ['-static']);
    const b = await peerRun(['node', 'bin/smc-run', 'enable', '--host', '--json']);
    expect(b.code, b.stderr).toBe(0);
    const a = await smcRun(['enable', '--host', '--json']);
    expect(a.code, a.stderr).toBe(0);
    expect(JSON.parse(a.stdout)).toMatchObject({ enabled: true, already: false, namespace: { label: 'host' } });
    // a plain Node echo server: no launcher, no preload (and one on IPv6)
    port = await startPeerServer('bpf-echo', ['server', '0.0.0.0'], { plain: true });
    port6 = await startPeerServer('bpf-echo6', ['server', '::'], { plain: true });
  }, 180_000);

  afterAll(async () => {
    await peer({ op: 'stop', name: 'bpf-echo' });
    await peer({ op: 'stop', name: 'bpf-echo6' });
    await peerRun(['node', 'bin/smc-run', 'disable', '--all']);
    await smcRun(['disable', '--all']);
    try { execFileSync('ip', ['netns', 'del', NS], { stdio: 'ignore' }); } catch { /* not made */ }
    fs.rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('unmodified programs connect over SMC-R with no launcher: Node, python3, a static C binary and a raw-syscall client (as Go makes its sockets); both ends SMC-R in sock_diag, the data intact', async () => {
    const clients = [
      { name: 'node', start: () => run(process.execPath, [ECHO, 'hold', PEER_IP, String(port), '3000']), also: () => run(process.execPath, [ECHO, 'client', PEER_IP, String(port), String(256 << 10)]) },
      { name: 'python3', start: () => run('python3', ['-c', PY_CLIENT, PEER_IP, String(port)]) },
      { name: 'static C', start: () => run(staticProbe, ['connect', PEER_IP, String(port), 'bytes=65536', 'hold=2000']) },
      { name: 'raw syscalls (as Go)', start: () => run(raw, [PEER_IP, String(port), String(1 << 20), '2000']) },
    ];
    expect(execFileSync('file', ['-b', staticProbe], { encoding: 'utf8' })).toMatch(/statically linked/);
    const before = listSmcSockets().filter((s) => s.remote.port === port).length;
    for (const c of clients) {
      const r = c.start();
      const mine = (await ends(port, (_s, cl) => cl.some((x) => x.mode === 'smcr'))).client;
      const out = await r;
      expect(out.code, `${c.name}: ${out.stderr}`).toBe(0);
      expect(mine.map((x) => x.mode), c.name).toContain('smcr');
      if (c.name === 'node') expect(jsonLines(out.stdout)[0]).toMatchObject({ connected: { mode: 'smcr' } });
      if (c.name === 'python3') expect(jsonLines(out.stdout)[0]).toMatchObject({ ok: true, protocol: 256 });
      if (c.name === 'raw syscalls (as Go)') expect(jsonLines(out.stdout)[0]).toMatchObject({ raw: true, protocol: 256, echo: true, bytes: 1 << 20 });
      if (c.name === 'static C') expect(jsonLines(out.stdout).find((j) => 'echo' in j)).toMatchObject({ echo: true, bytes: 65536 });
      if (c.also) {
        const more = await c.also();
        expect(more.code, more.stderr).toBe(0);
        expect(jsonLines(more.stdout)[0]).toMatchObject({ ok: true, client: { mode: 'smcr' } });
      }
    }
    expect(before).toBe(0);
    // the server, a plain `node echo.cjs` in guest b, saw SMC-R on every connection
    const conns = await peerConns('bpf-echo', 5);
    console.log(`plain server's ends: ${conns.map((c) => c.mode).join(',')}`);
    expect(conns.length).toBeGreaterThanOrEqual(5);
    expect(conns.every((c) => c.mode === 'smcr'), JSON.stringify(conns)).toBe(true);
    const st = await smcRun(['status', '--json']);
    expect(st.code, st.stderr).toBe(0);
    const status = JSON.parse(st.stdout) as { possible: boolean; loaded: boolean; namespaces: { inode: number; switched: number; pids: number }[] };
    const own = fs.statSync('/proc/self/ns/net').ino;
    expect(status).toMatchObject({ possible: true, loaded: true });
    expect(status.namespaces.find((n) => n.inode === own)?.switched).toBeGreaterThanOrEqual(5);
    // doctor names the mechanism: the switch is on for this namespace
    const d = await smcRun(['doctor', '--json', '--no-selftest']);
    const check = (JSON.parse(d.stdout) as { checks: { id: string; status: string; message: string }[] }).checks.find((c) => c.id === 'mechanism.bpf_switch');
    expect(check).toMatchObject({ status: 'ok', message: expect.stringMatching(/BPF switch is on for this namespace/) });
  }, 240_000);

  it('IPv6: a switched socket connects and the data arrives intact (IPv6 over SMC-R falls back to TCP on 6.12: SMC never costs the connection)', async () => {
    const r = await run(process.execPath, [ECHO, 'client', PEER_IP6, String(port6), String(256 << 10)]);
    expect(r.code, r.stderr).toBe(0);
    const out = jsonLines(r.stdout)[0] as { ok: boolean; client: { mode: string; fallback: string | null } };
    console.log(`IPv6 switched client: ${out.client.mode} ${out.client.fallback ?? ''}`);
    expect(out).toMatchObject({ ok: true });
    expect(['smcr', 'fallback']).toContain(out.client.mode);
  }, 120_000);

  it('per namespace: a namespace not enabled stays TCP while the host is switched; enabled, its sockets are SMC (falling back on loopback, the data intact); disabled, TCP again', async () => {
    execFileSync('ip', ['netns', 'add', NS]);
    execFileSync('ip', ['-n', NS, 'link', 'set', 'lo', 'up']);
    // one loopback connection inside the namespace; returns its sockets as that namespace's smc_diag sees them
    // one loopback connection inside the namespace, read while it is open: that namespace's SMC sockets
    // (smc_diag) and its established TCP connections (ss: the proof the connection was there to see)
    const once = async (): Promise<{ rows: Row[]; tcp: string; echo: unknown }> => {
      const server = await untilLine(['ip', 'netns', 'exec', NS, staticProbe, 'serve', '127.0.0.1', '0', '1'], /\{"port":(\d+)\}/);
      const port = Number(server.match[1]);
      const client = await untilLine(['ip', 'netns', 'exec', NS, staticProbe, 'connect', '127.0.0.1', String(port), 'bytes=65536', 'hold=5000'], /"echo"/);
      const seen = await smcRun(['stats', 'sockets', '--netns', NS, '--json']);
      const tcp = await run('ip', ['netns', 'exec', NS, 'ss', '-Htn', 'state', 'established']);
      expect(seen.code, seen.stderr + seen.stdout).toBe(0);
      expect(await client.done, client.out()).toBe(0);
      await server.done;
      const mine = (x: Row): boolean => x.local.port === port || x.remote.port === port;
      return { rows: rowsOf(seen.stdout).filter(mine), tcp: tcp.stdout.split('\n').filter((l) => new RegExp(`:${port}(\\s|$)`).test(l)).join('\n'), echo: jsonLines(client.out()).find((j) => 'echo' in j) };
    };
    const off = await once();
    expect(off.echo).toMatchObject({ echo: true, bytes: 65536 });
    expect(off.tcp.split('\n'), off.tcp).toHaveLength(2); // both ends, established, while smc_diag was read
    expect(off.rows).toEqual([]);

    const en = await smcRun(['enable', '--netns', NS, '--json']);
    expect(en.code, en.stderr + en.stdout).toBe(0);
    let dis;
    try {
      const on = await once();
      console.log(`enabled namespace, loopback: ${on.rows.map((x) => x.mode).join(',')}; ss: ${on.tcp}`);
      expect(on.echo).toMatchObject({ echo: true, bytes: 65536 });
      expect(on.rows.length).toBeGreaterThanOrEqual(2);
    } finally {
      dis = await smcRun(['disable', '--netns', NS, '--json']);
    }
    expect(dis.code, dis.stderr).toBe(0);
    expect(JSON.parse(dis.stdout)).toMatchObject({ enabled: false, was: true, left: 1 });
    expect((JSON.parse(dis.stdout) as { switched: number }).switched).toBeGreaterThanOrEqual(2);
    const again = await once();
    expect(again.echo).toMatchObject({ echo: true, bytes: 65536 });
    expect(again.tcp.split('\n'), again.tcp).toHaveLength(2);
    expect(again.rows).toEqual([]);
  }, 240_000);

  it('disable --host: new sockets are TCP again (no SMC socket for them), still connecting to the switched peer', async () => {
    const dis = await smcRun(['disable', '--host', '--json']);
    expect(dis.code, dis.stderr).toBe(0);
    expect(JSON.parse(dis.stdout)).toMatchObject({ was: true, left: 0 });
    const r = run(staticProbe, ['connect', PEER_IP, String(port), 'bytes=65536', 'hold=2000']);
    await new Promise((res) => setTimeout(res, 1200));
    const mine = listSmcSockets().filter((s) => s.remote.port === port);
    const out = await r;
    expect(out.code, out.stderr).toBe(0);
    expect(jsonLines(out.stdout).find((j) => 'echo' in j)).toMatchObject({ echo: true, bytes: 65536 });
    expect(mine).toEqual([]);
    const st = await smcRun(['status', '--json']);
    expect(JSON.parse(st.stdout)).toMatchObject({ loaded: false, namespaces: [] });
  }, 120_000);

  it('enable --cgroup: of two long-running programs in one namespace, the one in the cgroup (and the child it forks) gets SMC-R for its new connections, both ends; the other TCP; disable restores TCP', async () => {
    const cg = `/sys/fs/cgroup/smcrun-cg-${process.pid}`;
    const m = await run('sh', ['-c', 'mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup']);
    expect(m.code, m.stderr).toBe(0);
    fs.mkdirSync(cg);
    const start = (inCg: boolean): ChildProcessWithoutNullStreams =>
      spawn('sh', ['-c', `${inCg ? `echo $$ > ${cg}/cgroup.procs && ` : ''}exec python3 -c "$0" "$@"`, PY_ROUNDS, PEER_IP, String(port)], { stdio: 'pipe' });
    const inside = start(true);
    const outside = start(false);
    const protocols = (lines: Record<string, unknown>[]): string => lines.map((l) => `${String(l.tag)}:${String(l.protocol)}:${String(l.ok)}`).sort().join(' ');
    try {
      const first = (await peerConns('bpf-echo', 0)).length;
      // before enable: both TCP
      expect(protocols(await round(inside))).toBe('child:6:true parent:6:true');
      const en = await smcRun(['enable', '--cgroup', cg, '--json']);
      expect(en.code, en.stderr).toBe(0);
      const before = (await peerConns('bpf-echo', first + 2)).length;
      const r = round(inside);
      // while the two connections are held: this guest's sock_diag sees both client ends as SMC-R
      const mine = (await ends(port, (_s, cl) => cl.filter((x) => x.mode === 'smcr').length >= 2)).client;
      expect(protocols(await r)).toBe('child:256:true parent:256:true');
      expect(mine.filter((x) => x.mode === 'smcr')).toHaveLength(2);
      expect(protocols(await round(outside))).toBe('child:6:true parent:6:true');
      // the plain server in guest b: SMC-R for the cgroup's two, the outside program's two fell back
      const conns = (await peerConns('bpf-echo', before + 4)).slice(before);
      expect(conns.map((c) => c.mode).sort(), JSON.stringify(conns)).toEqual(['fallback', 'fallback', 'smcr', 'smcr']);
      const st = JSON.parse((await smcRun(['status', '--json'])).stdout) as { cgroups: { path: string; switched: number }[] };
      expect(st.cgroups).toEqual([expect.objectContaining({ path: cg, switched: 2 })]);
      // 6.12 has no smc_hs_ctrl: a cgroup policy is refused in one line, the scope as it was
      const pol = await smcRun(['enable', '--cgroup', cg, '--exclude', '10.0.0.0/8']);
      expect(pol.code).toBe(1);
      expect(pol.stderr.trim().split('\n')).toEqual([expect.stringMatching(/can't decide per destination in the kernel/)]);
      const dis = await smcRun(['disable', '--cgroup', cg, '--json']);
      expect(JSON.parse(dis.stdout)).toMatchObject({ was: true, switched: 2, left: 0 });
      expect(protocols(await round(inside))).toBe('child:6:true parent:6:true');
    } finally {
      inside.kill();
      outside.kill();
      await smcRun(['disable', '--all']);
      await new Promise((res) => setTimeout(res, 500));
      fs.rmdirSync(cg);
    }
  }, 240_000);

  it('the OCI hook on stock 6.12, run as the runtime runs it (the state on stdin): rules refused in one line, the container left on TCP; without rules its namespace switched, and undone at poststop', async () => {
    const ns = `smcrun-oci-${process.pid}`;
    execFileSync('ip', ['netns', 'add', ns]);
    // the container's first process: a sleep in its own namespace (no podman in these guests)
    const ctr = spawn('ip', ['netns', 'exec', ns, 'sleep', '60'], { stdio: 'ignore' });
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-oci-cache-'));
    const hook = (status: string, annotations: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> =>
      run(process.execPath, [BIN, 'oci-hook'], { XDG_CACHE_HOME: cache }, { input: JSON.stringify({ ociVersion: '1.0.2', id: `c${process.pid}`, status, pid: ctr.pid, annotations }) });
    try {
      await new Promise((r) => setTimeout(r, 500)); // ip netns exec has entered the namespace
      const inode = fs.statSync(`/run/netns/${ns}`).ino;
      expect(fs.statSync(`/proc/${ctr.pid}/ns/net`).ino).toBe(inode);
      const refused = await hook('created', { 'io.smc-run/enable': 'true', 'io.smc-run/exclude': '10.0.0.0/8' });
      expect(refused.code).toBe(0);
      expect(refused.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^smc-run oci-hook: container c\d+: this kernel \(6\.12[^)]*\) has no BPF handshake controller.*; the container runs on TCP$/)]);
      expect(JSON.parse((await smcRun(['status', '--json'])).stdout)).toMatchObject({ loaded: false, namespaces: [] });
      const required = await hook('created', { 'io.smc-run/enable': 'true', 'io.smc-run/exclude': '10.0.0.0/8', 'io.smc-run/required': 'true' });
      expect(required.code).toBe(1);
      const on = await hook('created', { 'io.smc-run/enable': 'true' });
      expect(on.code, on.stderr).toBe(0);
      expect(on.stderr).toBe('');
      const st = JSON.parse((await smcRun(['status', '--json'])).stdout) as { namespaces: { inode: number }[] };
      expect(st.namespaces.map((n) => n.inode)).toEqual([inode]);
      const off = await hook('stopped', { 'io.smc-run/enable': 'true' });
      expect(off.code, off.stderr).toBe(0);
      expect(JSON.parse((await smcRun(['status', '--json'])).stdout)).toMatchObject({ loaded: false, namespaces: [] });
    } finally {
      ctr.kill();
      await smcRun(['disable', '--all']);
      execFileSync('ip', ['netns', 'del', ns]);
      fs.rmSync(cache, { recursive: true, force: true });
    }
  }, 120_000);
});
