// smc-run seid show | enable | disable — the system EID (s390 only; OS-wide, not per namespace).
import type { Argv } from 'yargs';
import { getSeid, parseSeid, setSeid } from '../api/eid';
import type { RegisterCommand } from './commands';
import { CliError, EXIT_USAGE } from './errors';
import { printJson, withJson } from './options';

export const registerSeid: RegisterCommand = (y: Argv) => {
  y.command('seid <action>', 'show, enable or disable the system EID (s390 only)', (c) =>
    withJson(c)
      .positional('action', { choices: ['show', 'enable', 'disable'] as const, demandOption: true })
      .option('target', { type: 'number', hidden: true })
      .option('netns', { type: 'string', hidden: true }),
  (args) => {
    if (args.target !== undefined || args.netns !== undefined) {
      throw new CliError('EUSAGE', 'the system EID is global to the OS, not per network namespace: drop --target/--netns', EXIT_USAGE);
    }
    if (args.action !== 'show') setSeid(args.action === 'enable');
    const state = getSeid();
    const parts = parseSeid(state.seid);
    if (args.json) printJson(parts ? { ...state, ...parts } : state);
    else if (state.seid !== '') {
      const detail = parts ? `; machine type ${parts.machineType}, CPU identification ${parts.cpuIdent}` : '';
      process.stdout.write(`${state.seid} (${state.enabled ? 'enabled' : 'disabled'}${detail})\n`);
    } else if (process.arch === 's390x') {
      // the kernel makes its SEID known once an ISMv2 device (ISM, or loopback-ism) is registered
      process.stdout.write('no system EID reported: the kernel has one once an ISMv2 device (ISM or loopback-ism) is registered (see smc-run stats devices)\n');
    } else process.stdout.write('no system EID on this machine (SEIDs exist on s390 only; use smc-run ueid add <ID>)\n');
  });
};
