// A real Prometheus server (Debian's package, on the host root the guest boots from) scrapes
// `smc-run stats serve` for a fresh network namespace: its query API sees the SMC-D handshake counter rise
// by exactly the connections made there, and the PEERNOSMC fallback of a plain client; promtool accepts
// the exporter's output with live values in it. The operator's kit on top: Prometheus loads the shipped
// rules (a copy with 30 s windows and 10 s `for:`, see test/helpers/ops.ts: the production durations are
// promtool's unit tests' job), plain TCP clients make SmcFallbackSurge fire, and every panel query of the
// shipped dashboard, its variables set to this job, exporter and namespace, gives an answer.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, EXPECT_MODE, run } from '../../helpers/run';
import { echoClient, startEchoServer, waitForConns, type EchoServer } from '../../helpers/echo';
import { DASHBOARD_JSON, panelQueries, RULES_YML, shortenedRules } from '../../helpers/ops';

const CONNECTIONS = 5;
/** the live copy's windows: Prometheus scrapes and evaluates every second here */
const SHORT = { window: '30s', forDuration: '10s' };
const JOB = 'smc-run';

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

  const api = async <T>(pathAndQuery: string): Promise<T> => {
    const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/${pathAndQuery}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`${pathAndQuery}: ${body.error ?? body.status}`);
    return body.data;
  };
  type Vector = { metric: Record<string, string>; value: [number, string] }[];
  const instant = async (q: string): Promise<Vector> =>
    (await api<{ resultType: string; result: Vector }>(`query?query=${encodeURIComponent(q)}`)).result;
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
    fs.writeFileSync(path.join(dir, 'smc-run.rules.yml'), shortenedRules(fs.readFileSync(RULES_YML, 'utf8'), SHORT));
    fs.writeFileSync(config, `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nrule_files:\n  - smc-run.rules.yml\n` +
      `scrape_configs:\n  - job_name: ${JOB}\n    static_configs:\n      - targets: ['127.0.0.1:${exporterPort}']\n`);
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

  it('Prometheus loaded the shipped rules: 4 recording and 4 alerting rules, all evaluating without error', async () => {
    const data = await waitFor('the rules to be evaluated', 60_000, async () => {
      const d = await api<{ groups: { name: string; rules: { name: string; type: string; health: string; lastError?: string }[] }[] }>('rules');
      const rules = d.groups.flatMap((g) => g.rules);
      return rules.length === 8 && rules.every((r) => r.health === 'ok') ? d : undefined;
    });
    const rules = data.groups.flatMap((g) => g.rules);
    console.log(`rules: ${rules.map((r) => `${r.type} ${r.name} ${r.health}`).join('; ')}`);
    expect(rules.filter((r) => r.type === 'recording').map((r) => r.name)).toEqual([
      'netns:smc_handshakes:rate5m', 'netns:smc_fallbacks:rate5m', 'netns:smc_handshake_errors:rate5m', 'netns:smc_fallback_ratio:rate5m',
    ]);
    expect(rules.filter((r) => r.type === 'alerting').map((r) => r.name)).toEqual(['SmcFallbackSurge', 'SmcHandshakeErrorsRising', 'SmcDown', 'SmcExporterScrapeFailing']);
  });

  it('plain TCP clients against the SMC server make SmcFallbackSurge fire (state read from /api/v1/alerts)', async () => {
    type Alert = { labels: Record<string, string>; state: string; activeAt: string; value: string };
    const alerts = async (): Promise<Alert[]> => (await api<{ alerts: Alert[] }>('alerts')).alerts;
    expect((await alerts()).filter((a) => a.labels.alertname === 'SmcFallbackSurge')).toEqual([]);
    const port = (server as EchoServer).port;
    // bash's /dev/tcp: a plain TCP client (no smc-run), a line echoed back on each connection
    const burst = `for i in 1 2 3 4 5; do exec 3<>/dev/tcp/127.0.0.1/${port} && echo plain >&3 && read -r -t 10 l <&3 && [ "$l" = plain ] || exit 1; exec 3>&-; done`;
    const t0 = Date.now();
    let connections = 0;
    let states: string[] = [];
    const fired = await waitFor('SmcFallbackSurge to fire', 300_000, async () => {
      const r = await run('ip', ['netns', 'exec', ns, 'bash', '-c', burst]);
      expect(r.code, r.stderr).toBe(0);
      connections += 5;
      const mine = (await alerts()).filter((a) => a.labels.alertname === 'SmcFallbackSurge' && a.labels.netns === ns);
      states = mine.map((a) => a.state);
      return mine.find((a) => a.state === 'firing');
    });
    console.log(`SmcFallbackSurge firing after ${((Date.now() - t0) / 1000).toFixed(0)} s and ${connections} plain connections: ` +
      `${JSON.stringify(fired.labels)} value ${fired.value} (ratio), active since ${fired.activeAt}; states seen last ${states.join(',')}`);
    expect(fired.labels).toMatchObject({ alertname: 'SmcFallbackSurge', severity: 'warning', job: JOB, instance: `127.0.0.1:${exporterPort}`, netns: ns });
    expect(Number(fired.value)).toBeGreaterThan(0.2);
    // the kernel saw them as what they were: fallbacks for a peer without SMC, at the server (the alert
    // can fire on the scrapes before the last burst's: wait for a scrape that has them all)
    const reasons = `smc_fallback_reasons_total{netns="${ns}",side="server",reason="PEERNOSMC"}`;
    const counted = await waitFor(`${reasons} >= ${1 + connections}`, 30_000, async () => {
      const v = await query(reasons);
      return v !== undefined && v >= 1 + connections ? v : undefined;
    });
    expect(counted).toBeGreaterThanOrEqual(1 + connections);
    // the other alerts stay quiet: SMC answers, the exporter is scraped, no handshake failed
    expect((await alerts()).filter((a) => a.labels.alertname !== 'SmcFallbackSurge' && a.state === 'firing')).toEqual([]);
  });

  it('every panel query of the shipped dashboard gives a non-empty answer', async () => {
    // one SMC-D connection more, so that the rates over the panel window have both kinds
    const c = await echoClient('127.0.0.1', (server as EchoServer).port, 4096, { wrap });
    expect(c.result?.client, c.run.stderr).toMatchObject({ mode: 'smcd' });
    const queries = panelQueries(fs.readFileSync(DASHBOARD_JSON, 'utf8'), { job: JOB, instance: `127.0.0.1:${exporterPort}`, netns: ns, rateInterval: '1m' });
    expect(queries.length).toBe(11);
    const answers: string[] = [];
    for (const q of queries) {
      const result = await waitFor(`an answer to ${q.expr}`, 30_000, async () => {
        const r = await instant(q.expr);
        return r.length > 0 ? r : undefined;
      });
      const shown = result.map((s) => `${JSON.stringify(s.metric)}=${s.value[1]}`).join(' ');
      answers.push(`${q.title}: ${shown}`);
      for (const s of result) {
        expect(Number.isFinite(Number(s.value[1])), `${q.title}: ${shown}`).toBe(true);
        if (q.title !== 'Exporter scrapes (up)') expect(s.metric.netns, q.title).toBe(ns);
      }
    }
    console.log(`dashboard panels (${queries.length}):\n${answers.join('\n')}`);
    const byTitle = new Map(answers.map((a) => [a.slice(0, a.indexOf(':')), a]));
    expect(byTitle.get('SMC answering (smc_up)')).toMatch(/=1$/);
    expect(byTitle.get('Fallbacks to TCP by reason')).toContain('"reason":"PEERNOSMC"');
    expect(byTitle.get('SMC connections by mode')).toContain('"mode":"smcd"');
  });
});
