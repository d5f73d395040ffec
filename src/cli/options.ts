// Options shared by every tool subcommand, with one meaning everywhere.
import type { Argv } from 'yargs';
import type { NamespaceTarget } from '../netns';
import { CliError, EXIT_USAGE } from './errors';

export function withJson<T>(y: Argv<T>) {
  return y.option('json', { type: 'boolean', default: false, describe: 'print JSON instead of a table' });
}

export function withTarget<T>(y: Argv<T>) {
  return y
    .option('target', { type: 'number', describe: 'act in the network namespace of this PID (as nsenter -t)' })
    .option('netns', { type: 'string', describe: 'act in this network namespace (path, or a name under /run/netns)' });
}

export function targetOf(args: { target?: number | undefined; netns?: string | undefined }): NamespaceTarget {
  if (args.target !== undefined && Number.isNaN(args.target)) throw new CliError('EUSAGE', '--target needs a PID', EXIT_USAGE);
  return { target: args.target, netns: args.netns };
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
