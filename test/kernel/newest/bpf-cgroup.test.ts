// The BPF switch by cgroup (`smc-run enable --cgroup PATH | --unit NAME`), lane smcd-newest: sockets
// created by tasks in an enabled cgroup v2 directory, or below it, are SMC in whatever namespace they run;
// the other programs of the same namespace stay TCP. What the program sees: SO_PROTOCOL 256 (IPPROTO_SMC)
// against 6, and an echo between two plain Node programs in the cgroup over SMC-D on both ends.
// With --include/--exclude the kernel decides each connection of the cgroup's sockets (7.x: smc_hs_ctrl),
// before the namespace's own rules; a task of such a cgroup in a namespace where the kernel would not
// ask that policy gets TCP. A removed cgroup is shown as such and its entry goes at the next change.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoClient, startEchoServer, waitForConns, type EchoServer } from '../../helpers/echo';
import { EXPECT_MODE, SCENARIOS, run, smcRun } from '../../helpers/run';

const SLOW = 600_000;
const ROOT = '/sys/fs/cgroup';
const PROTO = 'import socket; s = socket.socket(); print(s.getsockopt(socket.SOL_SOCKET, socket.SO_PROTOCOL))';

/** argv run as a task of cgroup dir (the shell joins it, then execs: children stay in it). */
const inCgroup = (dir: string, argv: string[]): string[] => ['sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', dir, ...argv];

async function protocolIn(dir: string | undefined): Promise<string> {
  const argv = ['python3', '-c', PROTO];
  const full = dir ? inCgroup(dir, argv) : argv;
  const r = await run(full[0]!, full.slice(1));
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
}

describe.runIf(EXPECT_MODE === 'smcd')('the BPF switch by cgroup', () => {
  const cg = path.join(ROOT, `smcrun-cg-${process.pid}`);
  const child = path.join(cg, 'child');
  const unitDir = path.join(ROOT, 'system.slice', `smcrun-test-${process.pid}.service`);
  let server: EchoServer | undefined;

  beforeAll(async () => {
    const m = await run('sh', ['-c', `mountpoint -q ${ROOT} || mount -t cgroup2 none ${ROOT}`]);
    expect(m.code, m.stderr).toBe(0);
    for (const d of [cg, child, unitDir]) fs.mkdirSync(d, { recursive: true });
    await smcRun(['disable', '--all']);
  }, SLOW);

  afterAll(async () => {
    await server?.stop();
    await smcRun(['disable', '--all']);
    for (const d of [child, cg, unitDir]) {
      try {
        fs.rmdirSync(d);
      } catch {
        /* a task still in it */
      }
    }
  }, SLOW);

  it('enable --cgroup: its tasks and its child cgroup get SMC sockets, the rest of the namespace TCP', async () => {
    const r = await smcRun(['enable', '--cgroup', cg, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ enabled: true, already: false, cgroup: { path: cg } });
    expect(await protocolIn(cg)).toBe('256');
    expect(await protocolIn(child)).toBe('256');
    expect(await protocolIn(undefined)).toBe('6');
    const st = JSON.parse((await smcRun(['status', '--json'])).stdout) as { loaded: boolean; namespaces: unknown[]; cgroups: { id: string; switched: number }[] };
    expect(st.loaded).toBe(true);
    expect(st.namespaces).toEqual([]);
    expect(st.cgroups).toEqual([{ id: JSON.parse(r.stdout).cgroup.id, switched: 2, path: cg, containers: [] }]);
  }, SLOW);

  it('two plain Node programs in the cgroup (no launcher): SMC-D on both ends', async () => {
    server = await startEchoServer('127.0.0.1', { launcher: false, command: (argv) => inCgroup(cg, argv) });
    const argv = inCgroup(child, [process.execPath, path.join(SCENARIOS, 'echo.cjs'), 'client', '127.0.0.1', String(server.port), '65536']);
    const c = await run(argv[0]!, argv.slice(1));
    const line = c.stdout.split('\n').find((l) => l.startsWith('{'));
    expect(line, c.stderr).toBeDefined();
    const res = JSON.parse(line!) as { ok: boolean; client: { mode: string } };
    expect(res.ok).toBe(true);
    expect(res.client.mode).toBe('smcd');
    expect((await waitForConns(server, 1))[0]).toMatchObject({ mode: 'smcd' });
    // a client outside the cgroup, same namespace, no launcher: TCP to the SMC listener (a fallback there)
    const outside = await echoClient('127.0.0.1', server.port, 4096, { launcher: false });
    expect(outside.result?.client).toMatchObject({ mode: 'tcp' });
  }, SLOW);

  it('--exclude on a cgroup scope: held in the kernel for its sockets on both ends; enable without rules is SMC-D again and the policy goes', async () => {
    const hsCtrl = async (): Promise<string> => (await run('cat', ['/proc/sys/net/smc/hs_ctrl'])).stdout.trim();
    const ex = await smcRun(['enable', '--cgroup', cg, '--exclude', '127.0.0.0/8', '--json']);
    expect(ex.code, ex.stderr).toBe(0);
    expect(JSON.parse(ex.stdout)).toMatchObject({ enabled: true, already: true, policy: true });
    expect(await hsCtrl()).toBe('smc_run');
    const before = (await waitForConns(server!, 1)).length;
    const clientIn = async (): Promise<{ mode: string; fallback: string | null }> => {
      const argv = inCgroup(child, [process.execPath, path.join(SCENARIOS, 'echo.cjs'), 'client', '127.0.0.1', String(server!.port), '65536']);
      const c = await run(argv[0]!, argv.slice(1));
      const line = c.stdout.split('\n').find((l) => l.startsWith('{'));
      expect(line, c.stderr).toBeDefined();
      const res = JSON.parse(line!) as { ok: boolean; client: { mode: string; fallback: string | null } };
      expect(res.ok).toBe(true);
      return res.client;
    };
    // the client's SYN carries no SMC option: both ends plain TCP inside their SMC sockets
    expect(await clientIn()).toMatchObject({ mode: 'fallback', fallback: 'PEERNOSMC' });
    expect((await waitForConns(server!, before + 1))[before]).toMatchObject({ mode: 'fallback', fallback: 'PEERNOSMC' });
    const st = JSON.parse((await smcRun(['status', '--json'])).stdout) as { cgroups: { path: string; policy?: { exclude: unknown[]; held: number } }[] };
    expect(st.cgroups[0]?.policy?.exclude).toHaveLength(1);
    // the client's SYN; the kernel asks the listener's side only for a SYN that carried SMC's option
    expect(st.cgroups[0]?.policy?.held).toBe(1);
    const text = await smcRun(['status']);
    expect(text.stdout).toMatch(new RegExp(`${cg}\\s.*exclude 127\\.0\\.0\\.0/8`));

    const again = await smcRun(['enable', '--cgroup', cg, '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ already: true, policy: false });
    expect(await clientIn()).toMatchObject({ mode: 'smcd' });
    expect((await waitForConns(server!, before + 2))[before + 1]).toMatchObject({ mode: 'smcd' });
    expect(JSON.parse((await smcRun(['status', '--json'])).stdout)).toMatchObject({ policyLoaded: false, cgroups: [{ path: cg }] });
    expect((JSON.parse((await smcRun(['status', '--json'])).stdout) as { cgroups: { policy?: unknown }[] }).cgroups[0]?.policy).toBeUndefined();
    expect(await hsCtrl()).toBe('');
  }, SLOW);

  it('a cgroup with rules: its task in a namespace where the kernel would not ask the policy gets TCP there, SMC here', async () => {
    const r = await smcRun(['enable', '--cgroup', cg, '--include', '127.0.0.0/8', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(await protocolIn(cg)).toBe('256');
    // a new namespace made by the cgroup's own task after enable: net.smc.hs_ctrl is empty there
    const argv = inCgroup(cg, ['unshare', '-n', 'sh', '-c', `cat /proc/sys/net/smc/hs_ctrl; python3 -c '${PROTO}'`]);
    const u = await run(argv[0]!, argv.slice(1));
    expect(u.code, u.stderr).toBe(0);
    expect(u.stdout.split('\n').map((l) => l.trim())).toEqual(['', '6', '']);
    const off = await smcRun(['enable', '--cgroup', cg, '--json']);
    expect(off.code, off.stderr).toBe(0);
  }, SLOW);

  it('the cgroup and its namespace both enabled: sockets of the cgroup follow it (no rules: SMC-D), the others follow the --exclude of the namespace', async () => {
    const host = await smcRun(['enable', '--host', '--exclude', '127.0.0.0/8', '--json']);
    expect(host.code, host.stderr).toBe(0);
    try {
      const before = (await waitForConns(server!, 1)).length;
      const argv = inCgroup(child, [process.execPath, path.join(SCENARIOS, 'echo.cjs'), 'client', '127.0.0.1', String(server!.port), '65536']);
      const c = await run(argv[0]!, argv.slice(1));
      expect(JSON.parse(c.stdout.split('\n').find((l) => l.startsWith('{'))!)).toMatchObject({ ok: true, client: { mode: 'smcd' } });
      expect((await waitForConns(server!, before + 1))[before]).toMatchObject({ mode: 'smcd' });
      // outside the cgroup: switched by the namespace, its SYN held back by the namespace's rule
      const outside = await echoClient('127.0.0.1', server!.port, 4096, { launcher: false });
      expect(outside.result?.client).toMatchObject({ mode: 'fallback', fallback: 'PEERNOSMC' });
    } finally {
      expect((await smcRun(['disable', '--host'])).code).toBe(0);
    }
  }, SLOW);

  it('a cgroup removed while enabled: status says so, the next change of a cgroup removes its entry', async () => {
    const gone = path.join(ROOT, `smcrun-gone-${process.pid}`);
    fs.mkdirSync(gone);
    const r = await smcRun(['enable', '--cgroup', gone, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const id = (JSON.parse(r.stdout) as { cgroup: { id: string } }).cgroup.id;
    expect(String(fs.statSync(gone, { bigint: true }).ino)).toBe(id); // the id is the directory's inode (64-bit kernfs)
    fs.rmdirSync(gone);
    type St = { cgroups: { id: string; removed?: boolean; path?: string }[] };
    const st = JSON.parse((await smcRun(['status', '--json'])).stdout) as St;
    expect(st.cgroups.find((c) => c.id === id)).toEqual({ id, switched: 0, removed: true, containers: [] });
    expect((await smcRun(['status'])).stdout).toMatch(new RegExp(`id ${id} \\(removed\\)`));
    expect((await smcRun(['enable', '--cgroup', cg])).code).toBe(0);
    expect((JSON.parse((await smcRun(['status', '--json'])).stdout) as St).cgroups.map((c) => c.id)).not.toContain(id);
  }, SLOW);

  it('--unit NAME finds the cgroup systemd would give the service; disable restores TCP and unloads the switch', async () => {
    const u = await smcRun(['enable', '--unit', `smcrun-test-${process.pid}`, '--json']);
    expect(u.code, u.stderr).toBe(0);
    expect(JSON.parse(u.stdout)).toMatchObject({ cgroup: { path: unitDir } });
    expect(await protocolIn(unitDir)).toBe('256');
    const st = JSON.parse((await smcRun(['status', '--json'])).stdout) as { cgroups: { path?: string }[] };
    expect(st.cgroups.map((c) => c.path).sort()).toEqual([cg, unitDir].sort());
    expect((await smcRun(['status'])).stdout).toMatch(new RegExp(`${unitDir}\\s+smcrun-test-${process.pid}\\.service\\s`));
    for (const args of [['--unit', `smcrun-test-${process.pid}.service`], ['--cgroup', cg]]) {
      const d = await smcRun(['disable', ...args, '--json']);
      expect(d.code, d.stderr).toBe(0);
      expect(JSON.parse(d.stdout)).toMatchObject({ enabled: false, was: true });
    }
    expect(await protocolIn(cg)).toBe('6');
    expect(JSON.parse((await smcRun(['status', '--json'])).stdout)).toMatchObject({ loaded: false, cgroups: [] });
  }, SLOW);

  it('bad input: not a cgroup v2 directory, a unit with no cgroup, a cgroup with a namespace: one line, nothing loaded', async () => {
    const cases: [string[], number, RegExp][] = [
      [['enable', '--cgroup', '/tmp'], 1, /is not a cgroup v2 directory/],
      [['enable', '--unit', 'no-such-unit-here'], 1, /no cgroup of that name/],
      [['enable', '--cgroup', cg, '--host'], 2, /not both/],
    ];
    for (const [args, code, msg] of cases) {
      const r = await smcRun(args);
      expect(r.code, args.join(' ')).toBe(code);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toEqual([expect.stringMatching(msg)]);
    }
    expect(JSON.parse((await smcRun(['status', '--json'])).stdout)).toMatchObject({ loaded: false });
  }, SLOW);
});
