// smc-run stats sockets: one row per SMC socket, like smcss, with the mode and fallback reason in words.
import type { Argv } from 'yargs';
import { listSmcSockets, type SmcSocketRow } from '../stats/sockets';
import { socketInodesOf, socketOwners } from '../stats/owners';
import { noSmcError } from '../api/errors';
import type { RegisterCommand } from './commands';
import { CliError, EXIT_USAGE } from './errors';
import { fromTargetError, targetOf, withJson, withTarget } from './options';
import { renderTable, type Column } from './table';
import { formatSize } from '../units';

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
  let rows: SmcSocketRow[];
  try {
    rows = listSmcSockets(targetOf(args));
  } catch (e) {
    throw noSmcError(fromTargetError(e));
  }
  if (args.listening) rows = rows.filter((r) => r.listening);
  else if (!args.all) rows = rows.filter((r) => !r.listening && r.state !== 'CLOSED');
  if (args.pid !== undefined) {
    const mine = socketInodesOf(args.pid);
    rows = rows.filter((r) => mine.has(r.inode));
  }
  const owners = socketOwners(new Set(rows.map((r) => r.inode)));
  return rows.map((r) => ({ ...r, owners: owners.get(r.inode) ?? [] }));
}

function render(args: SocketsArgs): string {
  const rows = collectSockets(args);
  return args.json ? `${JSON.stringify({ sockets: rows }, null, 2)}\n` : renderTable(rows, COLUMNS);
}

async function watch(args: SocketsArgs, seconds: number): Promise<void> {
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
    if (a.pid !== undefined && socketInodesOf(a.pid).size === 0) {
      try {
        (await import('node:fs')).statSync(`/proc/${a.pid}`);
      } catch {
        throw new CliError('ESRCH', `no process with PID ${a.pid}`);
      }
    }
    if (a.watch !== undefined) {
      if (!(a.watch > 0)) throw new CliError('EUSAGE', '--watch needs a number of seconds > 0', EXIT_USAGE);
      await watch(a, a.watch);
    }
    process.stdout.write(render(a));
  });
}

export const registerStats: RegisterCommand = (y: Argv) => {
  y.command('stats', 'SMC statistics: sockets (more to come)', (c) => registerSockets(c).demandCommand(1, 'name what to show: sockets'));
};

