// A real Prometheus server (Debian's package, on the host root the guest boots from) scrapes
// `smc-run stats serve` for a fresh network namespace: its query API sees the SMC-D handshake counter rise
// by exactly the connections made there, and the PEERNOSMC fallback of a plain client; promtool accepts
// the exporter's output with live values in it.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, EXPECT_MODE, run } from '../../helpers/run';
import { echoClient, startEchoServer, waitForConns, type EchoServer } from '../../helpers/echo';

const CONNECTIONS = 5;

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

async function waitFor<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (${String(last)})` : ''}`);
}

describe.runIf(EXPECT_MODE === 'smcd')('Prometheus scraping smc-run stats serve', () => {
  const ns = `smcrun-prom-${process.pid}`;
  const wrap = ['ip', 'netns', 'exec', ns];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-prom-'));
  const children: ChildProcess[] = [];
  let exporterPort = 0;
  let promPort = 0;
  let server: EchoServer | undefined;

  const query = async (q: string): Promise<number | undefined> => {
    const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(q)}`);
    const body = (await res.json()) as { status: string; data: { result: { value: [number, string] }[] } };
    if (body.status !== 'success' || body.data.result.length === 0) return undefined;
    return Number(body.data.result[0]?.value[1]);
  };
  /** waits for the query to give exactly want (the scrape interval is 1 s) */
  const expectQuery = (q: string, want: number): Promise<number> =>
    waitFor(`${q} == ${want}`, 60_000, async () => ((await query(q)) === want ? want : undefined));

  beforeAll(async () => {
    expect((await run('ip', ['netns', 'add', ns])).code).toBe(0);
    expect((await run('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up'])).code).toBe(0);
    exporterPort = await freePort();
    const exporter = spawn(process.execPath, [BIN, 'stats', 'serve', '--listen', `127.0.0.1:${exporterPort}`, '--netns', ns], { stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(exporter);
    await waitFor('the exporter', 30_000, async () => ((await fetch(`http://127.0.0.1:${exporterPort}/metrics`)).ok ? true : undefined));
    promPort = await freePort();
    const config = path.join(dir, 'prometheus.yml');
    fs.writeFileSync(config, `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: smc\n    static_configs:\n      - targets: ['127.0.0.1:${exporterPort}']\n`);
    const prom = spawn('prometheus', [
      `--config.file=${config}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${promPort}`,
      '--log.level=warn',
    ], { stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(prom);
    await waitFor('Prometheus to scrape the exporter', 120_000, () => query('smc_up{netns="' + ns + '"}'));
  });

  afterAll(async () => {
    await server?.stop();
    for (const c of children) c.kill('SIGTERM');
    await run('ip', ['netns', 'del', ns]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('smc_up is 1 for the namespace and the output passes promtool check metrics', async () => {
    expect(await query(`smc_up{netns="${ns}"}`)).toBe(1);
    const text = await (await fetch(`http://127.0.0.1:${exporterPort}/metrics`)).text();
    const check = await run('promtool', ['check', 'metrics'], {}, { input: text });
    expect(check.code, `${check.stdout}${check.stderr}`).toBe(0);
  });

  it(`the SMC-D client handshake counter rises by exactly the ${CONNECTIONS} connections made`, async () => {
    const series = `smc_handshakes_total{netns="${ns}",mode="smcd",side="client",version="v2"}`;
    const before = await expectQuery(series, 0);
    server = await startEchoServer('127.0.0.1', { wrap });
    for (let i = 0; i < CONNECTIONS; i++) {
      const c = await echoClient('127.0.0.1', server.port, 4096, { wrap });
      expect(c.result?.client, c.run.stderr).toMatchObject({ mode: 'smcd' });
    }
    await waitForConns(server, CONNECTIONS);
    expect(await expectQuery(series, before + CONNECTIONS)).toBe(CONNECTIONS);
    expect(await expectQuery(`smc_handshakes_total{netns="${ns}",mode="smcd",side="server",version="v2"}`, CONNECTIONS)).toBe(CONNECTIONS);
    expect(await expectQuery(`smc_bytes_total{netns="${ns}",mode="smcd",direction="tx"}`, 2 * CONNECTIONS * 4096)).toBeGreaterThan(0);
  });

  it('a plain client shows as a PEERNOSMC fallback on the server side', async () => {
    const series = `smc_fallback_reasons_total{netns="${ns}",side="server",reason="PEERNOSMC"}`;
    expect(await query(series)).toBeUndefined();
    const c = await echoClient('127.0.0.1', (server as EchoServer).port, 4096, { wrap, launcher: false });
    expect(c.result?.ok, c.run.stderr).toBe(true);
    expect(await expectQuery(series, 1)).toBe(1);
    expect(await expectQuery(`smc_fallbacks_total{netns="${ns}",side="server"}`, 1)).toBe(1);
  });
});
