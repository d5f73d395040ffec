// smc-run ueid list | add ID | del ID | flush — the OS-wide UEID table (not per namespace).
import type { Argv } from 'yargs';
import { listUeids, addUeid, removeUeid, flushUeids } from '../api/eid';
import type { RegisterCommand } from './commands';
import { CliError, EXIT_USAGE } from './errors';
import { printJson, withJson } from './options';

function rejectNamespace(args: { target?: unknown; netns?: unknown }): void {
  if (args.target !== undefined || args.netns !== undefined) {
    throw new CliError('EUSAGE', 'the UEID table is global to the OS, not per network namespace: drop --target/--netns', EXIT_USAGE);
  }
}

export const registerUeid: RegisterCommand = (y: Argv) => {
  y.command('ueid <action> [id]', 'list, add, delete or flush User Enterprise IDs (needed for SMCv2 off s390)', (c) =>
    withJson(c)
      .positional('action', { choices: ['list', 'add', 'del', 'flush'] as const, demandOption: true })
      .positional('id', { type: 'string', describe: 'the UEID (1-32 of A-Z 0-9 . -)' })
      .option('target', { type: 'number', hidden: true })
      .option('netns', { type: 'string', hidden: true })
      .example('smc-run ueid add SMC-RUN-UEID', 'on both hosts: SMC-Rv2 / SMC-Dv2 can now be negotiated'),
  async (args) => {
    rejectNamespace(args);
    const needId = args.action === 'add' || args.action === 'del';
    if (needId && !args.id) throw new CliError('EUSAGE', `ueid ${args.action} needs an ID`, EXIT_USAGE);
    if (!needId && args.id) throw new CliError('EUSAGE', `ueid ${args.action} takes no ID`, EXIT_USAGE);
    if (args.action === 'add') addUeid(args.id as string);
    else if (args.action === 'del') removeUeid(args.id as string);
    else if (args.action === 'flush') flushUeids();
    const ueids = listUeids();
    if (args.json) printJson({ ueids });
    else if (args.action === 'list') process.stdout.write(ueids.length ? `${ueids.join('\n')}\n` : '');
  });
};
