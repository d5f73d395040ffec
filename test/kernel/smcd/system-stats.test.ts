// The namespace's SMC counters on a real kernel: in a fresh network namespace (counters start at zero)
// a 4 MiB SMC-D echo and a forced fallback move exactly the counters they should, seen through
// `stats system --netns`, `--target PID`, and as deltas with --save / --since.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, EXPECT_MODE, SCENARIOS, run, scenarioResults, smcRun } from '../../helpers/run';
import { echoClient, startEchoServer, waitForConns, type EchoServer } from '../../helpers/echo';
import type { SmcSystemStats } from '../../../src/stats/system';
import { getSmcDevices, getSmcLinkGroups, getSmcSystemInfo } from '../../../src/api/system';

const N = 4 << 20;
const zeroConns = { clientV1: 0, clientV2: 0, serverV1: 0, serverV2: 0 };

describe.runIf(EXPECT_MODE === 'smcd')('system SMC statistics in a fresh network namespace', () => {
  const ns = `smcrun-stats-${process.pid}-${Date.now().toString(36)}`;
  const wrap = ['ip', 'netns', 'exec', ns];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-stats-'));
  const snap = path.join(dir, 'before.snap');
  let server: EchoServer | undefined;

  async function system(...extra: string[]): Promise<{ system: SmcSystemStats; since?: string; saved?: string }> {
    const r = await smcRun(['stats', 'system', '--json', ...(extra.includes('--target') ? [] : ['--netns', ns]), ...extra]);
    expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
    return JSON.parse(r.stdout);
  }

  beforeAll(async () => {
    const add = await run('ip', ['netns', 'add', ns]);
    expect(add.code, add.stderr).toBe(0);
    expect((await run('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up'])).code).toBe(0);
  });

  afterAll(async () => {
    await server?.stop();
    await run('ip', ['netns', 'del', ns]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('starts at zero, and --save records that', async () => {
    const s = await system('--save', snap);
    expect(s.saved).toBe(snap);
    expect(s.system.smcd.connections).toEqual(zeroConns);
    expect(s.system.smcd.bytes).toEqual({ rx: 0, tx: 0 });
    expect(s.system.fallbacks.server.total + s.system.fallbacks.client.total).toBe(0);
    expect(JSON.parse(fs.readFileSync(snap, 'utf8'))).toMatchObject({ format: 'smc-run-stats-snapshot', netns: expect.stringMatching(/^net:\[\d+\]$/) });
  });

  it('a 4 MiB SMC-D echo: one client + one server SMCv2 connection, 4 MiB each way on each end', async () => {
    server = await startEchoServer('127.0.0.1', { wrap });
    const c = await echoClient('127.0.0.1', server.port, N, { wrap });
    expect(c.result?.ok, c.run.stderr).toBe(true);
    expect(c.result?.client).toMatchObject({ mode: 'smcd', fallback: null });
    await waitForConns(server, 1);
    const s = (await system()).system;
    console.log(`SMC-D after the echo: connections ${JSON.stringify(s.smcd.connections)}, bytes ${JSON.stringify(s.smcd.bytes)}, requests ${JSON.stringify(s.smcd.requests)}`);
    expect(s.smcd.connections).toEqual({ clientV1: 0, clientV2: 1, serverV1: 0, serverV2: 1 });
    // client sends 4 MiB, server echoes 4 MiB: each direction's counter sums both ends
    expect(s.smcd.bytes).toEqual({ rx: 2 * N, tx: 2 * N });
    expect(s.smcd.requests.rx).toBeGreaterThan(0);
    expect(s.smcr.connections).toEqual(zeroConns);
    expect(s.smcr.bytes).toEqual({ rx: 0, tx: 0 });
    expect(s.handshakeErrors).toEqual({ client: 0, server: 0 });
    expect(s.fallbacks.server.total + s.fallbacks.client.total).toBe(0);
    // --target PID reads the same namespace as --netns NAME
    const byPid = (await system('--target', String(server.child.pid))).system;
    expect(byPid.smcd.connections).toEqual(s.smcd.connections);
    expect(byPid.smcd.bytes).toEqual(s.smcd.bytes);
  });

  it('a plain (not hooked) client makes the server fall back: PEERNOSMC +1 on the server side', async () => {
    if (!server) throw new Error('no server');
    const c = await echoClient('127.0.0.1', server.port, 4096, { wrap, launcher: false });
    expect(c.result?.ok, c.run.stderr).toBe(true);
    const conns = await waitForConns(server, 2);
    expect(conns[1]).toMatchObject({ mode: 'fallback', fallback: 'PEERNOSMC' });
    const s = (await system()).system;
    expect(s.fallbacks.server).toMatchObject({ total: 1, countsWrap: false, reasons: [{ name: 'PEERNOSMC', code: 0x03010000, count: 1 }] });
    expect(s.fallbacks.client).toEqual({ total: 0, countsWrap: false, reasons: [] });
    expect(s.smcd.connections).toEqual({ clientV1: 0, clientV2: 1, serverV1: 0, serverV2: 1 });
  });

  it('--since shows exactly those deltas (the snapshot was taken at zero)', async () => {
    const now = (await system()).system;
    const d = await system('--since', snap);
    expect(d.since).toMatch(/^\d{4}-/);
    expect(d.system.smcd.connections).toEqual({ clientV1: 0, clientV2: 1, serverV1: 0, serverV2: 1 });
    expect(d.system.smcd.bytes).toEqual({ rx: 2 * N, tx: 2 * N });
    expect(d.system.fallbacks.server.reasons.map((r) => [r.name, r.count])).toEqual([['PEERNOSMC', 1]]);
    expect(d.system.fallbacks.client.total).toBe(0);
    expect(d.system.smcr.bytes).toEqual({ rx: 0, tx: 0 });
    // nothing else moved: against a zero snapshot the deltas are the counters themselves
    expect(d.system).toEqual(now);
    const text = await smcRun(['stats', 'system', '--netns', ns, '--since', snap]);
    expect(text.code).toBe(0);
    console.log(text.stdout);
    expect(text.stdout).toMatch(/^Changes since /);
    expect(text.stdout).toMatch(/server\s+PEERNOSMC\s+1/);
    expect(text.stdout).toContain(`${2 * N} (8.0 MiB)`);
    expect(text.stdout).toContain('SMC-R: no change');
  });

  it('--since refuses a snapshot of another namespace', async () => {
    const r = await smcRun(['stats', 'system', '--since', snap, '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'ESTALE', message: expect.stringMatching(/another network namespace/) } });
  });

  it('info, devices and link groups from inside the namespace', async () => {
    // the API in-process for the details (each CLI start costs seconds under TCG), the CLI for the text
    expect(getSmcSystemInfo({ netns: ns })).toMatchObject({ version: 2, ismV2: true });
    expect(getSmcDevices({ netns: ns })).toMatchObject({ smcd: [], loopbackIsm: true, ismV2: true });
    const groups = getSmcLinkGroups({ netns: ns });
    console.log(`link groups seen from the namespace: ${groups.smcd.length} SMC-D, ${groups.smcr.length} SMC-R`);
    expect(groups.smcd.length).toBeGreaterThan(0);
    expect(groups.smcd[0]?.v2).toMatchObject({ peerOs: 'Linux' });
    const dev = await smcRun(['stats', 'devices', '--netns', ns]);
    expect(dev.code, dev.stderr).toBe(0);
    expect(dev.stdout).toMatch(/leaves loopback-ism out of this list/);
    expect(dev.stdout).toMatch(/loopback-ism: present/);
    const lgr = await smcRun(['stats', 'linkgroups', '--netns', ns]);
    expect(lgr.code, lgr.stderr).toBe(0);
    expect(lgr.stdout).toMatch(/^SMC-D link groups\n  ID +GID/);
    expect(lgr.stdout).toContain('the kernel lists the link groups of the whole host');
  });

  it('TCP_CORK cleared and TCP_NODELAY set on a connected SMC-D socket move the CORK and NDLY counters by one each', async () => {
    const calls = async () => (await system()).system.smcd.calls;
    for (const [mode, moved] of [['cork', 'cork'], ['nodelay', 'nodelay']] as const) {
      const before = await calls();
      const r = await run('ip', ['netns', 'exec', ns, process.execPath, BIN, process.execPath, path.join(SCENARIOS, 'cork.cjs'), mode]);
      const [res] = scenarioResults(r.stdout);
      expect(res?.ok, r.stdout + r.stderr).toBe(true);
      expect(res?.beforeRelease).toBe(0);
      expect(res?.conns.map((c) => c.mode)).toEqual(['smcd', 'smcd']);
      const after = await calls();
      const delta = { cork: after.cork - before.cork, nodelay: after.nodelay - before.nodelay };
      expect(delta).toEqual(moved === 'cork' ? { cork: 1, nodelay: 0 } : { cork: 0, nodelay: 1 });
    }
  });
});
