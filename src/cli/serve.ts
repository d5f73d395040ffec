// smc-run stats serve: a read-only Prometheus exporter of the SMC metrics (src/metrics) of one or more
// network namespaces. Each namespace is opened once at start (src/metrics/namespace-reader.ts) and read
// through the kernel off the event loop; scrapes that arrive while a collection runs share it, the
// connections are capped and slow clients timed out. A namespace without SMC (or gone) is `smc_up 0` with
// its reason, never a failed scrape. Logs are pino JSON lines on stderr (loaded here only: the preload
// and the other commands never load pino).
import * as http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Argv } from 'yargs';
import { buildFamilies, renderPrometheusText, PROMETHEUS_CONTENT_TYPE, type MetricFamily, type MetricsTarget, type NamespaceReading } from '../metrics';
import { ContainerNamespaces } from '../metrics/container-namespaces';
import { NamespaceReader } from '../metrics/namespace-reader';
import { sharedWhileRunning } from '../metrics/shared-call';
import { CliError, EXIT_USAGE, toCliError } from './errors';

/** The exporter's own port (not registered anywhere); 127.0.0.1 unless --listen says otherwise. */
export const DEFAULT_LISTEN = '127.0.0.1:9787';
/** Prometheus scrapes with one connection per target; a few more for people and health checks. */
export const DEFAULT_MAX_CONNECTIONS = 64;
/** Time a client has to send its request (headers and all), and the idle time of a kept-alive connection. */
export const DEFAULT_CLIENT_TIMEOUT_S = 10;

interface ServeArgs {
  listen: string;
  target: number[] | undefined;
  netns: string[] | undefined;
  containers: boolean;
  maxConnections: number;
  clientTimeout: number;
  logLevel: string;
}

/** What the exporter logs through (a pino logger, or a test's recorder). */
export interface ExporterLogger {
  debug(fields: object, msg: string): void;
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
  error(fields: object, msg: string): void;
}

/** ADDR:PORT, [V6]:PORT or :PORT (all addresses). */
export function parseListen(s: string): { host: string | undefined; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d+)$/.exec(s);
  const port = m ? Number(m[3]) : NaN;
  if (!m || !Number.isInteger(port) || port < 0 || port > 65535) throw new CliError('EUSAGE', `--listen ${s}: expected ADDR:PORT, [IPv6]:PORT or :PORT`, EXIT_USAGE);
  const host = m[1] ?? m[2];
  return { host: host === '' ? undefined : host, port };
}

export function targetsOf(a: Pick<ServeArgs, 'target' | 'netns'> & { containers?: boolean }): MetricsTarget[] {
  const targets: MetricsTarget[] = [];
  for (const pid of a.target ?? []) targets.push({ target: pid });
  for (const ns of a.netns ?? []) targets.push({ netns: ns });
  // --containers alone: the containers only (the host's own namespace only when named)
  if (targets.length === 0 && !a.containers) targets.push({});
  return targets;
}

const shownTarget = (t: MetricsTarget): string => (t.target !== undefined ? `--target ${t.target}` : t.netns !== undefined ? `--netns ${t.netns}` : 'its own namespace');

/**
 * Opens every namespace once, at start-up: a typo or a missing PID fails now, with one line. Two targets in
 * one namespace (the same PID twice, two PIDs or paths of one netns) are refused: Prometheus rejects a
 * scrape with duplicate series, and the second would only repeat the first under another label.
 */
export function openReaders(targets: readonly MetricsTarget[]): NamespaceReader[] {
  const readers: NamespaceReader[] = [];
  const byInode = new Map<number, MetricsTarget>();
  try {
    for (const t of targets) {
      let r: NamespaceReader;
      try {
        r = NamespaceReader.open(t);
      } catch (e) {
        throw toCliError(e);
      }
      readers.push(r);
      const first = byInode.get(r.inode);
      if (first !== undefined) {
        const same = first.target !== undefined && first.target === t.target ? `${shownTarget(t)} is given twice` : `${shownTarget(first)} and ${shownTarget(t)} are the same network namespace (net:[${r.inode}])`;
        throw new CliError('EUSAGE', `${same}: give each namespace once (Prometheus rejects duplicate series)`, EXIT_USAGE);
      }
      byInode.set(r.inode, t);
    }
  } catch (e) {
    for (const r of readers) r.close();
    throw e;
  }
  return readers;
}

/**
 * One collection for every scrape that asks while it runs: N scrapers at once cost the kernel one reading
 * of each namespace, not N. Each namespace's error is logged when it appears or changes, and when it ends.
 */
export function sharedCollection(readers: readonly NamespaceReader[], logger: ExporterLogger, containers?: ContainerNamespaces): { collect: () => Promise<MetricFamily[]>; collections: () => number } {
  let collections = 0;
  const lastError = new Map<string, string>();
  const logErrors = (readings: readonly NamespaceReading[]): void => {
    for (const r of readings) {
      const before = lastError.get(r.netns);
      if (r.error) {
        const now = `${r.error.reason ?? ''}/${r.error.code}`;
        if (now !== before) logger.warn({ event: 'scrape_error', netns: r.netns, code: r.error.code, reason: r.error.reason, err: { message: r.error.message } }, `cannot read namespace ${r.netns}: ${r.error.message}`);
        lastError.set(r.netns, now);
      } else if (before !== undefined) {
        logger.info({ event: 'scrape_recovered', netns: r.netns }, `namespace ${r.netns} read again`);
        lastError.delete(r.netns);
      }
    }
  };
  const collect = async (): Promise<MetricFamily[]> => {
    collections++;
    // one namespace after another: a host with many namespaces keeps one kernel dump at a time
    const readings: NamespaceReading[] = [];
    for (const r of [...readers, ...(containers?.refresh() ?? [])]) readings.push(await r.read());
    logErrors(readings);
    return containers ? [...buildFamilies(readings), containers.info()] : buildFamilies(readings);
  };
  return {
    collect: sharedWhileRunning(collect),
    collections: () => collections,
  };
}

export interface ExporterOptions {
  maxConnections: number;
  /** ms a client has to send its whole request; also the idle limit of kept-alive connections */
  clientTimeoutMs: number;
  logger: ExporterLogger;
}

const remoteOf = (req: http.IncomingMessage): string => {
  const s = req.socket;
  return s.remoteFamily === 'IPv6' ? `[${s.remoteAddress}]:${s.remotePort}` : `${s.remoteAddress}:${s.remotePort}`;
};

export function createExporter(collect: () => Promise<MetricFamily[]>, opts: ExporterOptions): http.Server {
  let scrapes = 0;
  const { logger } = opts;
  const server = http.createServer({
    headersTimeout: opts.clientTimeoutMs,
    requestTimeout: opts.clientTimeoutMs,
    keepAliveTimeout: Math.min(5000, opts.clientTimeoutMs),
    // how often Node looks for clients past those limits (default 30 s: a slow client would hold on longer)
    connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.floor(opts.clientTimeoutMs / 4))),
  }, (req, res) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const durationMs = Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10;
      // every scrape is a request: debug level, and the path only (a query string can be kilobytes long)
      const path = (req.url ?? '/').split('?')[0]!.slice(0, 200);
      logger.debug({ event: 'request', method: req.method, path, status: res.statusCode, durationMs, remote: remoteOf(req) }, `${req.method} ${path} ${res.statusCode}`);
    });
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
    const n = scrapes;
    collect().then(
      (families) => {
        const body = renderPrometheusText(families) +
          '# HELP smc_exporter_scrapes_total Scrapes of /metrics served by this exporter (this one included).\n' +
          `# TYPE smc_exporter_scrapes_total counter\nsmc_exporter_scrapes_total ${n}\n`;
        res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE }).end(req.method === 'HEAD' ? undefined : body);
      },
      (e: Error) => {
        logger.error({ event: 'scrape_failed', code: (e as { code?: string }).code, err: { message: e.message, stack: e.stack } }, `scrape failed: ${e.message}`);
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`scrape failed: ${e.message}\n`);
      },
    );
  });
  server.maxConnections = opts.maxConnections;
  server.on('drop', (d?: { remoteAddress?: string; remotePort?: number }) => {
    logger.warn({ event: 'connection_dropped', remote: `${d?.remoteAddress}:${d?.remotePort}`, maxConnections: opts.maxConnections }, 'connection refused: --max-connections reached');
  });
  return server;
}

async function serve(a: ServeArgs): Promise<never> {
  const { host, port } = parseListen(a.listen);
  const targets = targetsOf(a);
  const readers = openReaders(targets);
  const { default: pino } = await import('pino');
  const logger = pino({ name: 'smc-run', level: a.logLevel }, pino.destination({ dest: 2, sync: true }));
  const containers = a.containers ? new ContainerNamespaces(new Set(readers.map((r) => r.inode))) : undefined;
  const { collect, collections } = sharedCollection(readers, logger, containers);
  const server = createExporter(collect, { maxConnections: a.maxConnections, clientTimeoutMs: a.clientTimeout * 1000, logger });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(new CliError(e.code ?? 'EIO', `cannot listen on ${a.listen}: ${e.code === 'EADDRINUSE' ? 'address in use' : (e.code ?? e.message)}`)));
    server.listen(port, host, () => resolve());
  });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const addr = server.address();
  const shown = typeof addr === 'object' && addr ? `${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}` : a.listen;
  logger.info({
    event: 'start', listen: shown, url: `http://${shown}/metrics`, maxConnections: a.maxConnections, clientTimeoutS: a.clientTimeout,
    targets: readers.map((r) => ({ netns: r.label, inode: r.inode })), containers: a.containers,
  }, `serving SMC metrics of ${[...readers.map((r) => r.label), ...(a.containers ? ['the containers the OCI hook switched'] : [])].join(', ')} on http://${shown}/metrics`);
  const stop = (signal: NodeJS.Signals): void => {
    delay.disable();
    const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
    logger.info({
      event: 'stop', signal, collections: collections(),
      // SMC family resolutions per namespace: 1 for a namespace with SMC whose family never went away
      familyResolutions: Object.fromEntries(readers.map((r) => [r.label, r.resolutions])),
      eventLoopDelayMs: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
    }, `stopping on ${signal}`);
    server.close();
    for (const r of readers) r.close();
    containers?.close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // runs until a signal ends the process
  return new Promise<never>(() => {});
}

export function registerServe(y: Argv): Argv {
  return y.command('serve', 'Prometheus exporter of the SMC metrics (read-only HTTP, /metrics)', (c) =>
    c
      .option('listen', { type: 'string', default: DEFAULT_LISTEN, describe: 'ADDR:PORT to listen on' })
      .option('target', { type: 'number', array: true, describe: 'a network namespace to export: that of this PID, opened once at start (repeatable)' })
      .option('netns', { type: 'string', array: true, describe: 'a network namespace to export: path or name under /run/netns (repeatable)' })
      .option('containers', { type: 'boolean', default: false, describe: 'also every namespace the OCI hook switched (smc-run oci-hook), found at each scrape, labelled by pod or container (smc_container_info); alone, only those' })
      .option('max-connections', { type: 'number', default: DEFAULT_MAX_CONNECTIONS, describe: 'connections served at once; more are closed at once' })
      .option('client-timeout', { type: 'number', default: DEFAULT_CLIENT_TIMEOUT_S, describe: 'seconds a client has to send its request (and the idle limit of a kept-alive connection)' })
      .option('log-level', { type: 'string', default: 'info', choices: ['debug', 'info', 'warn', 'error', 'silent'], describe: 'least level of the JSON log lines on stderr (info: start, stop, failures; debug: one per request too)' })
      .example('smc-run stats serve', `the host's SMC metrics on http://${DEFAULT_LISTEN}/metrics`)
      .example('smc-run stats serve --listen :9787 --target 4321 --netns blue', 'two containers, on all addresses')
      .example('smc-run stats serve --containers', 'the containers and pods switched by annotation'),
  async (args) => {
    const a = args as unknown as ServeArgs;
    for (const pid of a.target ?? []) if (!Number.isSafeInteger(pid) || pid <= 0) throw new CliError('EUSAGE', '--target needs a PID', EXIT_USAGE);
    if (!Number.isSafeInteger(a.maxConnections) || a.maxConnections < 1) throw new CliError('EUSAGE', '--max-connections needs a whole number of 1 or more', EXIT_USAGE);
    if (!Number.isFinite(a.clientTimeout) || a.clientTimeout <= 0) throw new CliError('EUSAGE', '--client-timeout needs a number of seconds above 0', EXIT_USAGE);
    await serve(a);
  });
}
