// SMC over SoftRoCE between the two guests on Debian 12's stock 6.1 (smcr-6.1 lane), as it really is:
// 6.1's SMC learns an RDMA port's interface only from the driver's ops.get_netdev, which rdma_rxe lacks
// (fixed in 6.12: "net/smc: Fix lookup of netdev by using ib_device_get_netdev()"), so SMC's device list
// shows rxe0/1 with no net device and every connection falls back: the client with NOSMCDEV, the server
// with PEERDECL (the client's diagnosis NOSMCDEV). Giving both a PNET ID lets SMC pair them, but then the
// SMC-R link setup fails and the kernel hangs freeing it (smc_wr_drain_cq, seen on 6.1.176 in both guests),
// so the suite does not. A client in guest a (enableSmc in a child node, so the connection stays open while
// it is looked at) against an echo server under smc-run in guest b, asserted on both ends through
// sock_diag (getSmcInfo, `stats sockets`), the counters (`stats system`), `stats linkgroups`/`devices`.
import { spawn } from 'node:child_process';
import * as os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPECT_MODE, REPO, smcRun } from '../../helpers/run';
import { PEER_IP, peer, peerConns, startPeerServer } from '../../helpers/peer';
import type { SmcSocketInfo } from '../../../src/stats/sockets';
import type { SmcSystemStats } from '../../../src/stats/system';

if (EXPECT_MODE !== 'smcr' || !os.release().startsWith('6.1.')) throw new Error(`the 6.1 suite runs in the smcr-6.1 guest (kernel ${os.release()}, SMC_RUN_EXPECT=${EXPECT_MODE})`);

const GUEST_IP = process.env.SMC_RUN_GUEST_IP ?? '';
const BYTES = 256 << 10;

// the client: enables SMC in-process (the library API, no launcher), echoes BYTES, prints its
// getSmcInfo and then holds the connection until stdin closes
const CLIENT = `
const api = require(${JSON.stringify(`${REPO}/dist/index.js`)});
const net = require('node:net');
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const [host, port, n] = process.argv.slice(1);
out({ enabled: api.enableSmc({ proto: 'auto' }) });
const c = net.connect(Number(port), host, () => c.write(Buffer.alloc(Number(n), 0x5a)));
let got = 0;
c.on('data', (d) => { got += d.length; if (got === Number(n)) out({ info: api.getSmcInfo(c), localPort: c.localPort, echoed: got }); });
c.on('error', (e) => { out({ error: e.message }); process.exit(1); });
process.stdin.on('end', () => c.end()).resume();
c.on('close', () => process.exit(0));
`;

interface Row { mode: string; state: string; local: { address: string; port: number }; remote: { address: string; port: number }; linkGroup: { ibDevice: string } | null }

function startClient(port: number) {
  const child = spawn(process.execPath, ['-e', CLIENT, PEER_IP, String(port), String(BYTES)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  let buf = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.on('data', (d) => {
    buf += d;
    for (let i; (i = buf.indexOf('\n')) >= 0; buf = buf.slice(i + 1)) lines.push(JSON.parse(buf.slice(0, i)) as Record<string, unknown>);
  });
  const waitFor = async (key: string, ms = 120_000): Promise<Record<string, unknown>> => {
    const end = Date.now() + ms;
    for (;;) {
      const hit = lines.find((l) => key in l || 'error' in l);
      if (hit) return hit;
      if (Date.now() > end || child.exitCode !== null) throw new Error(`client: no ${key} (${JSON.stringify(lines)}; ${stderr})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const close = () => new Promise<number | null>((r) => { if (child.exitCode !== null) r(child.exitCode); else { child.once('exit', r); child.stdin.end(); } });
  return { waitFor, close };
}

async function systemStats(where: 'a' | 'b'): Promise<SmcSystemStats> {
  const r = where === 'a' ? await smcRun(['stats', 'system', '--json']) : await peer<{ code: number; stdout: string; stderr: string }>({ op: 'run', argv: ['node', 'bin/smc-run', 'stats', 'system', '--json'] });
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { system: SmcSystemStats }).system;
}

describe('SMC-R on 6.1 between two guests', () => {
  let port = 0;
  let client: ReturnType<typeof startClient> | undefined;
  let before: { a: SmcSystemStats; b: SmcSystemStats };
  beforeAll(async () => {
    before = { a: await systemStats('a'), b: await systemStats('b') };
    port = await startPeerServer('k61-echo', ['server', '0.0.0.0']);
  });
  afterAll(async () => {
    await client?.close();
  });

  it('the library API (proto auto) takes AF_SMC; getSmcInfo shows the NOSMCDEV fallback in words', async () => {
    client = startClient(port);
    const enabled = (await client.waitFor('enabled')).enabled;
    expect(enabled).toEqual({ enabled: true, ipv4: 'af_smc', ipv6: 'af_smc', reason: undefined });
    const got = await client.waitFor('info');
    expect(got.echoed).toBe(BYTES);
    const info = got.info as SmcSocketInfo;
    console.log(`getSmcInfo on 6.1: ${JSON.stringify(info)}`);
    expect(info).toMatchObject({ mode: 'fallback', state: 'ACTIVE', listening: false, family: 'IPv4', buffers: null, bytes: null, linkGroup: null, dmb: null });
    expect(info.fallback).toMatchObject({ code: 0x03030000, name: 'NOSMCDEV', peerCode: 0 });
    expect(info.fallback?.description).toMatch(/no SMC device/);
    expect(info.local).toEqual({ address: GUEST_IP, port: got.localPort });
    expect(info.remote).toEqual({ address: PEER_IP, port });
    expect(info.inode).toBeGreaterThan(0);
  });

  it('stats sockets lists the open connection in both guests with each end\'s fallback reason', async () => {
    const local = (await client!.waitFor('info')).localPort as number;
    const a = await smcRun(['stats', 'sockets', '--json']);
    expect(a.code, a.stderr).toBe(0);
    const mine = (JSON.parse(a.stdout) as { sockets: Row[] }).sockets.find((r) => r.local.port === local && r.remote.port === port);
    expect(mine, a.stdout).toMatchObject({ mode: 'fallback', fallback: { name: 'NOSMCDEV' }, state: 'ACTIVE', local: { address: GUEST_IP }, remote: { address: PEER_IP }, linkGroup: null });
    const b = await peer<{ code: number; stdout: string; stderr: string }>({ op: 'run', argv: ['node', 'bin/smc-run', 'stats', 'sockets', '--json'] });
    expect(b.code, b.stderr).toBe(0);
    const rows = (JSON.parse(b.stdout) as { sockets: Row[] }).sockets;
    const theirs = rows.find((r) => r.local.port === port && r.remote.port === local);
    expect(theirs, b.stdout).toMatchObject({ mode: 'fallback', fallback: { name: 'PEERDECL', peerName: 'NOSMCDEV' }, state: 'ACTIVE', local: { address: PEER_IP }, remote: { address: GUEST_IP }, linkGroup: null });
  });

  it('stats linkgroups: no link group was made', async () => {
    const lg = await smcRun(['stats', 'linkgroups', '--json']);
    expect(lg.code, lg.stderr).toBe(0);
    const groups = (JSON.parse(lg.stdout) as { linkGroups: { smcr: { role?: string; links: { ibDevice: string | null; gid: string | null; peerGid: string | null }[] }[]; smcd: unknown[] } }).linkGroups;
    console.log(`stats linkgroups on 6.1: ${JSON.stringify(groups)}`);
    expect(groups).toEqual({ smcd: [], smcr: [] });
  });

  it("stats devices: rxe0/1 active but with no net device and no PNET ID (the cause), no SMC-D device", async () => {
    const r = await smcRun(['stats', 'devices', '--json']);
    expect(r.code, r.stderr).toBe(0);
    console.log(`stats devices on 6.1: ${r.stdout.replace(/\s+/g, ' ')}`);
    const d = JSON.parse(r.stdout) as { devices: { smcr: { name: string | null; ports: { port: number }[] }[]; smcd: unknown[] } };
    expect(d.devices.smcr).toHaveLength(1);
    expect(d.devices.smcr[0]?.name).toBe('rxe0');
    expect(d.devices.smcr[0]?.ports).toEqual([{ port: 1, pnetId: '', pnetIdByUser: false, netdevIndex: 0, state: 'active', valid: true, links: 0 }]);
    expect(d.devices.smcd).toEqual([]);
  });

  it('closing: the server saw the fallback too; stats system counted it by reason, and no SMC-R connection', async () => {
    expect(await client!.close()).toBe(0);
    const [server] = await peerConns('k61-echo', 1);
    expect(server).toMatchObject({ side: 'server', mode: 'fallback', fallback: 'PEERDECL', peer: 'NOSMCDEV' });
    const after = { a: await systemStats('a'), b: await systemStats('b') };
    const n = (s: SmcSystemStats, k: 'clientV1' | 'clientV2' | 'serverV1' | 'serverV2') => s.smcr.connections[k];
    console.log(`stats system on 6.1: a ${JSON.stringify(after.a.smcr.connections)}, b ${JSON.stringify(after.b.smcr.connections)}`);
    for (const k of ['clientV1', 'clientV2', 'serverV1', 'serverV2'] as const) {
      expect(n(after.a, k), k).toBe(n(before.a, k));
      expect(n(after.b, k), k).toBe(n(before.b, k));
    }
    const count = (st: SmcSystemStats, side: 'client' | 'server', name: string) => st.fallbacks[side].reasons.find((r) => r.name === name)?.count ?? 0;
    expect(after.a.fallbacks.client.total - before.a.fallbacks.client.total).toBe(1);
    expect(count(after.a, 'client', 'NOSMCDEV') - count(before.a, 'client', 'NOSMCDEV')).toBe(1);
    expect(after.b.fallbacks.server.total - before.b.fallbacks.server.total).toBe(1);
    expect(count(after.b, 'server', 'PEERDECL') - count(before.b, 'server', 'PEERDECL')).toBe(1);
    // the buffer-usage levels came with 6.10: 6.1 sends none
    expect(after.a.smcr.bufferUsage).toBeNull();
  });
});
