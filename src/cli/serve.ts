// smc-run stats serve: a read-only Prometheus exporter of the SMC metrics (src/metrics) of one or more
// network namespaces. Each scrape reads the kernel through the promise API, so concurrent scrapes and
// slow namespaces never block the server; a namespace without SMC is `smc_up 0`, never a failed scrape.
import * as http from 'node:http';
import type { Argv } from 'yargs';
import { collectSmcMetrics, renderPrometheusText, PROMETHEUS_CONTENT_TYPE, type MetricsTarget } from '../metrics';
import { checkNetns } from '../netns';
import { log } from '../log';
import { CliError, EXIT_USAGE } from './errors';
import { fromTargetError } from './options';

/** The exporter's own port (not registered anywhere); 127.0.0.1 unless --listen says otherwise. */
export const DEFAULT_LISTEN = '127.0.0.1:9787';

interface ServeArgs {
  listen: string;
  target: number[] | undefined;
  netns: string[] | undefined;
}

/** ADDR:PORT, [V6]:PORT or :PORT (all addresses). */
export function parseListen(s: string): { host: string | undefined; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d+)$/.exec(s);
  const port = m ? Number(m[3]) : NaN;
  if (!m || !Number.isInteger(port) || port < 0 || port > 65535) throw new CliError('EUSAGE', `--listen ${s}: expected ADDR:PORT, [IPv6]:PORT or :PORT`, EXIT_USAGE);
  const host = m[1] ?? m[2];
  return { host: host === '' ? undefined : host, port };
}

/** Checks every namespace once at start-up (a typo fails now, with one line), then serves. */
export function targetsOf(a: Pick<ServeArgs, 'target' | 'netns'>): MetricsTarget[] {
  const targets: MetricsTarget[] = [];
  for (const pid of a.target ?? []) targets.push({ target: pid });
  for (const ns of a.netns ?? []) targets.push({ netns: ns });
  if (targets.length === 0) targets.push({});
  for (const t of targets) {
    try {
      checkNetns(t);
    } catch (e) {
      throw fromTargetError(e);
    }
  }
  return targets;
}

export function createExporter(targets: MetricsTarget[]): http.Server {
  let scrapes = 0;
  return http.createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('read-only exporter\n');
      return;
    }
    if (url === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html><body><h1>smc-run exporter</h1><p><a href="/metrics">/metrics</a></p></body></html>\n');
      return;
    }
    if (url !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics\n');
      return;
    }
    scrapes++;
    collectSmcMetrics(targets).then(
      (families) => {
        const body = renderPrometheusText(families) +
          '# HELP smc_exporter_scrapes_total Scrapes of /metrics served by this exporter (this one included).\n' +
          `# TYPE smc_exporter_scrapes_total counter\nsmc_exporter_scrapes_total ${scrapes}\n`;
        res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE }).end(req.method === 'HEAD' ? undefined : body);
      },
      (e: Error) => {
        log.error(`scrape failed: ${e.message}`);
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`scrape failed: ${e.message}\n`);
      },
    );
  });
}

async function serve(a: ServeArgs): Promise<never> {
  const { host, port } = parseListen(a.listen);
  const targets = targetsOf(a);
  const server = createExporter(targets);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(new CliError(e.code ?? 'EIO', `cannot listen on ${a.listen}: ${e.code === 'EADDRINUSE' ? 'address in use' : (e.code ?? e.message)}`)));
    server.listen(port, host, () => resolve());
  });
  const addr = server.address();
  const shown = typeof addr === 'object' && addr ? `${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}` : a.listen;
  log.info(`serving SMC metrics of ${targets.map((t) => t.target !== undefined ? `pid:${t.target}` : (t.netns ?? 'self')).join(', ')} on http://${shown}/metrics`);
  // runs until a signal ends the process
  return new Promise<never>(() => {});
}

export function registerServe(y: Argv): Argv {
  return y.command('serve', 'Prometheus exporter of the SMC metrics (read-only HTTP, /metrics)', (c) =>
    c
      .option('listen', { type: 'string', default: DEFAULT_LISTEN, describe: 'ADDR:PORT to listen on' })
      .option('target', { type: 'number', array: true, describe: 'a network namespace to export: that of this PID (repeatable)' })
      .option('netns', { type: 'string', array: true, describe: 'a network namespace to export: path or name under /run/netns (repeatable)' })
      .example('smc-run stats serve', `the host's SMC metrics on http://${DEFAULT_LISTEN}/metrics`)
      .example('smc-run stats serve --listen :9787 --target 4321 --netns blue', 'two containers, on all addresses'),
  async (args) => {
    const a = args as unknown as ServeArgs;
    for (const pid of a.target ?? []) if (!Number.isSafeInteger(pid) || pid <= 0) throw new CliError('EUSAGE', '--target needs a PID', EXIT_USAGE);
    await serve(a);
  });
}
