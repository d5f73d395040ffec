// smc-run hs-limit show | enable | disable — SMC handshake limitation of one network namespace.
//
// One value, two kernel doors: the sysctl net.smc.limit_smc_hs and the SMC generic netlink commands
// DUMP/ENABLE/DISABLE_HS_LIMITATION both read and set the same per-namespace field (net->smc.limit_smc_hs).
// smc-run goes through the sysctl module only, so `hs-limit` and `sysctl get/set limit_smc_hs` are one
// implementation with one set of checks and messages. When on, SMC listeners created afterwards in
// that namespace take new connections as plain TCP while SMC handshakes are backed up.
import type { Argv } from 'yargs';
import { readSmcSysctl, writeSmcSysctl } from '../sysctl';
import type { RegisterCommand } from './commands';
import { printJson, targetOf, withJson, withTarget } from './options';
import { guarded } from './sysctl';

const NAME = 'limit_smc_hs';

interface HsArgs {
  action: 'show' | 'enable' | 'disable';
  target: number | undefined;
  netns: string | undefined;
  json: boolean;
}

function run(args: HsArgs): void {
  const target = targetOf(args);
  if (args.action === 'show') {
    const s = readSmcSysctl(NAME, target);
    const enabled = s.value === 1;
    if (args.json) printJson({ enabled, key: s.key, value: s.value });
    else process.stdout.write(`handshake limitation: ${enabled ? 'on' : 'off'} (${s.key} = ${s.value})\n`);
    return;
  }
  const change = writeSmcSysctl(NAME, args.action === 'enable' ? 1 : 0, target);
  if (args.json) printJson({ enabled: change.new === 1, change });
  else process.stdout.write(`${change.key}: ${change.old} -> ${change.new}\n`);
}

export const registerHsLimit: RegisterCommand = (y: Argv) => {
  y.command('hs-limit <action>', 'SMC handshake limitation of a network namespace (net.smc.limit_smc_hs): show, enable, disable', (c) =>
    withTarget(withJson(c))
      .positional('action', { choices: ['show', 'enable', 'disable'] as const, demandOption: true })
      .example('smc-run hs-limit enable --target 4321', "in a container's namespace: its SMC servers turn to TCP under handshake bursts"),
  (a) => guarded(() => run(a as unknown as HsArgs)));
};
