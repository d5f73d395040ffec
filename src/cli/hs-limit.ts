// smc-run hs-limit show | enable | disable — SMC handshake limitation of one network namespace.
//
// One value, two kernel doors: the sysctl net.smc.limit_smc_hs and the SMC generic netlink commands
// DUMP/ENABLE/DISABLE_HS_LIMITATION both read and set the same per-namespace field (net->smc.limit_smc_hs).
// smc-run goes through the sysctl module where the kernel has the sysctl, so `hs-limit` and `sysctl
// get/set limit_smc_hs` are one implementation with one set of checks and messages. Older kernels have
// only the netlink door (Debian 12's 6.1: the commands work, the sysctl does not exist): there hs-limit
// uses the netlink commands; a kernel with neither says so in one line (exit 1). Big-endian hosts (s390x)
// use the netlink door too: the kernel keeps the field as a bool but its sysctl handler writes an int, so
// on a big-endian machine the sysctl's 1 lands in bytes the bool does not cover (seen on 6.12 s390x: the
// sysctl read back 1, the netlink view said off, and after a netlink enable the sysctl reads 16777216).
// When on, SMC listeners
// created afterwards in that namespace take new connections as plain TCP while SMC handshakes are
// backed up.
import type { Argv } from 'yargs';
import { withSmcGenl } from '../api/genl';
import { NetlinkError } from '../netlink/socket';
import { HOST_BYTE_ORDER } from '../netlink/host-order';
import { readSmcSysctl, SysctlError, writeSmcSysctl } from '../sysctl';
import { withPinnedNetns, type NamespaceTarget } from '../netns';
import type { RegisterCommand } from './commands';
import { CliError, EXIT_FAILURE } from './errors';
import { printJson, targetOf, withJson, withTarget } from './options';

const NAME = 'limit_smc_hs';

interface HsArgs {
  action: 'show' | 'enable' | 'disable';
  target: number | undefined;
  netns: string | undefined;
  json: boolean;
}

/** The netlink door, for kernels without the sysctl and for big-endian hosts. */
function viaNetlink(args: HsArgs, target: NamespaceTarget, why: string): void {
  let before: boolean;
  let after: boolean;
  try {
    ({ before, after } = withSmcGenl(target, (g) => {
      const b = g.hsLimitation();
      if (args.action !== 'show') g.setHsLimitation(args.action === 'enable');
      return { before: b, after: args.action === 'show' ? b : g.hsLimitation() };
    }));
  } catch (e) {
    // a kernel from before the handshake limitation answers the unknown command with EOPNOTSUPP
    if (e instanceof NetlinkError && e.code === 'EOPNOTSUPP') {
      throw new CliError('ENOTSUP', `this kernel has no SMC handshake limitation (neither net.smc.limit_smc_hs nor the SMC netlink HS_LIMITATION commands: ${e.code})`, EXIT_FAILURE);
    }
    throw e;
  }
  const via = 'netlink';
  if (args.action === 'show') {
    if (args.json) printJson({ enabled: after, via });
    else process.stdout.write(`handshake limitation: ${after ? 'on' : 'off'} (${why})\n`);
    return;
  }
  if (args.json) printJson({ enabled: after, change: { old: before, new: after }, via });
  else process.stdout.write(`handshake limitation: ${before ? 'on' : 'off'} -> ${after ? 'on' : 'off'} (${why})\n`);
}

/** The sysctl door; ENOTSUP (the kernel has no such sysctl) sends the call to the netlink door. */
function run(args: HsArgs): void {
  withPinnedNetns(targetOf(args), (target) => runIn(args, target));
}

function runIn(args: HsArgs, target: NamespaceTarget): void {
  if (HOST_BYTE_ORDER === 'BE') {
    try {
      viaNetlink(args, target, 'SMC netlink; on a big-endian host the kernel\'s net.smc.limit_smc_hs sysctl misses its bool');
    } catch (e) {
      // no SMC netlink here: when the kernel has no SMC at all, reading the sysctl says so (ENOSMC), as on
      // every other host; otherwise the netlink error stands
      readSmcSysctl(NAME, target);
      throw e;
    }
    return;
  }
  try {
    viaSysctl(args, target);
  } catch (e) {
    if (!(e instanceof SysctlError && e.code === 'ENOTSUP')) throw e;
    viaNetlink(args, target, 'SMC netlink; this kernel has no net.smc.limit_smc_hs');
  }
}

function viaSysctl(args: HsArgs, target: NamespaceTarget): void {
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
  (a) => run(a as unknown as HsArgs));
};
