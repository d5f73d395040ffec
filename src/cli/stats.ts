// smc-run stats sockets: one row per SMC socket, like smcss, with the mode and fallback reason in words.
// smc-run stats system | devices | linkgroups | info: the namespace's SMC counters (with snapshots for
// deltas), devices, link groups and system info.
import * as fs from 'node:fs';
import type { Argv } from 'yargs';
import { listSmcSockets, type SmcSocketRow } from '../stats/sockets';
import { socketInodesOf, socketOwners } from '../proc/owners';
import type { RegisterCommand } from './commands';
import { CliError, EXIT_USAGE } from './errors';
import { printJson, targetOf, withJson, withTarget } from './options';
import { withPinnedNetns, type NamespaceTarget } from '../netns';
import { renderTable, type Column } from './table';
import { formatSize } from '../units';
import { getSmcDevices, getSmcLinkGroups, getSmcSystemInfo, getSmcSystemStats } from '../api/system';
import { checkScope, counterScope, diffSystemStats, makeSnapshot, parseSnapshot, saveSnapshot, type StatsSnapshot } from './snapshot';
import { renderDevices, renderInfo, renderLinkGroups, renderSystemStats } from './system-view';
import { registerServe } from './serve';

interface SocketsArgs {
  all: boolean;
  listening: boolean;
  pid: number | undefined;
  target: number | undefined;
  netns: string | undefined;
  json: boolean;
  watch: number | undefined;
}

const endpoint = (e: { address: string; port: number }): string => (e.address.includes(':') ? `[${e.address}]:${e.port}` : `${e.address}:${e.port}`);

const MODE_TEXT: Record<string, string> = { smcd: 'SMC-D', smcr: 'SMC-R', fallback: 'TCP(fallback)', tcp: 'TCP', listening: '-' };

const COLUMNS: Column<SmcSocketRow>[] = [
  { header: 'State', value: (r) => r.state },
  { header: 'Mode', value: (r) => MODE_TEXT[r.mode] ?? r.mode },
  { header: 'Local', value: (r) => endpoint(r.local) },
  { header: 'Peer', value: (r) => (r.listening ? '*' : endpoint(r.remote)) },
  { header: 'Sndbuf', value: (r) => (r.buffers ? formatSize(r.buffers.sndbuf) : '-'), align: 'right' },
  { header: 'RMBE', value: (r) => (r.buffers ? formatSize(r.buffers.rmbe) : '-'), align: 'right' },
  { header: 'Process', value: (r) => (r.owners ?? []).map((o) => `${o.command}/${o.pid}`).join(',') },
  { header: 'Fallback', value: (r) => (r.fallback ? `${r.fallback.name}${r.fallback.peerName ? `/peer:${r.fallback.peerName}` : ''}: ${r.fallback.description}` : '') },
];

export function collectSockets(args: Omit<SocketsArgs, 'json' | 'watch'>): SmcSocketRow[] {
  // a kernel without SMC, a bad namespace...: main()'s toCliError says it, as for every command
  let rows: SmcSocketRow[] = listSmcSockets(targetOf(args));
  if (args.listening) rows = rows.filter((r) => r.listening);
  else if (!args.all) rows = rows.filter((r) => !r.listening && r.state !== 'CLOSED');
  const read = new Map<number, Set<number>>();
  if (args.pid !== undefined) {
    const mine = socketInodesOf(args.pid);
    read.set(args.pid, mine);
    rows = rows.filter((r) => mine.has(r.inode));
  }
  const owners = socketOwners(new Set(rows.map((r) => r.inode)), read);
  return rows.map((r) => ({ ...r, owners: owners.get(r.inode) ?? [] }));
}

function render(args: SocketsArgs): string {
  const rows = collectSockets(args);
  return args.json ? `${JSON.stringify({ sockets: rows }, null, 2)}\n` : renderTable(rows, COLUMNS);
}

/** Prints the listing every SECONDS until the process is stopped (it never returns). */
async function watch(args: SocketsArgs, seconds: number): Promise<never> {
  const clear = process.stdout.isTTY ? '\x1b[H\x1b[2J' : '';
  for (;;) {
    const body = render(args);
    process.stdout.write(`${clear}${args.json ? '' : `smc-run stats sockets, every ${seconds}s (${new Date().toISOString()})\n`}${body}`);
    await new Promise((r) => setTimeout(r, seconds * 1000));
  }
}

function registerSockets(y: Argv): Argv {
  return y.command('sockets', 'SMC sockets with mode, fallback reason, buffers and owning process', (c) =>
    withTarget(withJson(c))
      .option('all', { alias: 'a', type: 'boolean', default: false, describe: 'all sockets, listening and closed too' })
      .option('listening', { alias: 'l', type: 'boolean', default: false, describe: 'only listening sockets' })
      .option('pid', { type: 'number', describe: "only this process's sockets" })
      .option('watch', { alias: 'w', type: 'number', describe: 'refresh every SECONDS (Ctrl-C stops)' })
      .example('smc-run stats sockets --pid 1234', 'the connections of one process')
      .example('smc-run stats sockets --target 4321 --json', "a container's sockets (the namespace of PID 4321)"),
  async (args) => {
    const a = args as unknown as SocketsArgs;
    if (a.pid !== undefined && (!Number.isSafeInteger(a.pid) || a.pid <= 0)) throw new CliError('EUSAGE', '--pid needs a PID', EXIT_USAGE);
    if (a.pid !== undefined) {
      try {
        fs.statSync(`/proc/${a.pid}`);
      } catch {
        throw new CliError('ESRCH', `no process with PID ${a.pid}`);
      }
    }
    if (a.watch === undefined) {
      process.stdout.write(render(a));
      return;
    }
    if (!(a.watch > 0)) throw new CliError('EUSAGE', '--watch needs a number of seconds > 0', EXIT_USAGE);
    await watch(a, a.watch);
  });
}

interface NsArgs {
  target: number | undefined;
  netns: string | undefined;
  json: boolean;
}

interface SystemArgs extends NsArgs {
  save: string | undefined;
  since: string | undefined;
}

/** Reads a kernel view of the namespace the options name, opened once for every read of the command. */
function query<T>(args: NsArgs, read: (t: NamespaceTarget) => T): T {
  return withPinnedNetns(targetOf(args), read);
}

function readSnapshot(file: string): StatsSnapshot {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'EIO';
    throw new CliError(code, `cannot read the snapshot ${file}: ${code === 'ENOENT' ? 'no such file (write one with --save)' : code}`);
  }
  return parseSnapshot(text, file);
}

function showSystem(a: SystemArgs): void {
  for (const [name, v] of [['save', a.save], ['since', a.since]] as const) {
    if (v !== undefined && (typeof v !== 'string' || v === '')) throw new CliError('EUSAGE', `--${name} needs one FILE`, EXIT_USAGE);
  }
  // a bad --since file is reported before the kernel is asked anything
  const before = a.since !== undefined ? readSnapshot(a.since) : undefined;
  const { stats, scope } = query(a, (t) => ({ stats: getSmcSystemStats(t), scope: counterScope(t) }));
  const now = new Date();
  let shown = stats;
  let since: { savedAt: string; seconds: number } | undefined;
  if (before && a.since !== undefined) {
    checkScope(before, scope, a.since);
    shown = diffSystemStats(stats, before.stats);
    since = { savedAt: before.savedAt, seconds: Math.max(0, Math.round((now.getTime() - Date.parse(before.savedAt)) / 1000)) };
  }
  if (a.save !== undefined) saveSnapshot(a.save, makeSnapshot(stats, scope, now));
  if (a.json) {
    printJson({ ...(since ? { since: since.savedAt, seconds: since.seconds } : {}), system: shown, ...(a.save !== undefined ? { saved: a.save } : {}) });
  } else {
    process.stdout.write(renderSystemStats(shown, since) + (a.save !== undefined ? `Snapshot saved to ${a.save}\n` : ''));
  }
}

function registerSystemViews(y: Argv): Argv {
  return y
    .command('system', 'SMC counters of the namespace: connections, bytes, buffers, fallback reasons', (c) =>
      withTarget(withJson(c))
        // no requiresArg: yargs reports that as an internal error; showSystem checks for the name
        .option('save', { type: 'string', describe: 'also write a snapshot of the counters to FILE' })
        .option('since', { type: 'string', describe: 'show what changed since the snapshot in FILE' })
        .example('smc-run stats system --save /tmp/smc.snap', 'remember the counters now (the kernel has no reset)')
        .example('smc-run stats system --since /tmp/smc.snap', 'what happened since then'),
    (args) => showSystem(args as unknown as SystemArgs))
    .command('devices', 'SMC-D (ISM) and SMC-R (RDMA) devices', (c) => withTarget(withJson(c)), (args) => {
      const a = args as unknown as NsArgs;
      const d = query(a, (t) => getSmcDevices(t));
      if (a.json) printJson({ devices: d });
      else process.stdout.write(renderDevices(d));
    })
    .command('linkgroups', 'SMC-D and SMC-R link groups (and SMC-R links)', (c) => withTarget(withJson(c)), (args) => {
      const a = args as unknown as NsArgs;
      const l = query(a, (t) => getSmcLinkGroups(t));
      if (a.json) printJson({ linkGroups: l });
      else process.stdout.write(renderLinkGroups(l, a.target !== undefined || a.netns !== undefined));
    })
    .command('info', 'SMC version, SMC-Dv2 / SMC-Rv2 capability, system EID', (c) => withTarget(withJson(c)), (args) => {
      const a = args as unknown as NsArgs;
      const i = query(a, (t) => getSmcSystemInfo(t));
      if (a.json) printJson({ info: i });
      else process.stdout.write(renderInfo(i));
    });
}

export const registerStats: RegisterCommand = (y: Argv) => {
  y.command('stats', 'SMC statistics: sockets, system, devices, linkgroups, info; serve = Prometheus exporter', (c) =>
    registerServe(registerSystemViews(registerSockets(c))).demandCommand(1, 'name what to show: sockets, system, devices, linkgroups, info or serve'));
};

