// `--proto ipproto` on a kernel without IPPROTO_SMC (before 6.11, e.g. Debian 12's 6.1): the kernel has
// SMC, only not that socket type, so the notice must say so instead of "no SMC in this kernel".
import * as os from 'node:os';
import type { ShimConfig } from '../config';
import { AF_SMC, SMCPROTO_SMC } from '../constants';
import type { NativeAddon } from '../native';

/** Whether an AF_SMC socket can be made (to tell "no IPPROTO_SMC" from "no SMC at all"). */
function afSmcWorks(addon: NativeAddon): boolean {
  try {
    addon.closeFd(addon.createSocket(AF_SMC, SMCPROTO_SMC));
    return true;
  } catch {
    return false;
  }
}

/**
 * When no family got an SMC socket: the reason and notice for `--proto ipproto` on a kernel that has
 * AF_SMC but no IPPROTO_SMC, or undefined when that is not the case (the generic "no SMC" applies).
 */
export function ipprotoUnsupported(addon: NativeAddon, config: ShimConfig, reasons: readonly string[]): { reason: string; notice: string } | undefined {
  if (config.proto !== 'ipproto' || config.socketFamily === 'inet' || !afSmcWorks(addon)) return undefined;
  const reason = `--proto ipproto: this kernel (${os.release()}) has no IPPROTO_SMC sockets (${reasons.join(', ')}; they need Linux 6.11+)`;
  return { reason, notice: `${reason}: running on plain TCP; without --proto ipproto smc-run uses AF_SMC, which this kernel has` };
}
