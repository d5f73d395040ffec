// Turning SMC on for this thread: load the addon, probe the kernel once per family, install the hook.
// Every way it can fail ends with the program on TCP and one notice (per process tree), never a throw.
import type { ShimConfig } from '../config';
import { configureLog } from '../log';
import { addonFix, firstLine, loadAddon } from '../native';
import { hookState, installHook } from './install';
import { noticeOnce } from './notice';
import { probeFamily, type IpFamily, type SocketSpec } from './socket-spec';

export interface EnableResult {
  enabled: boolean;
  /** socket kind used per family, or undefined where that family stays TCP */
  ipv4: SocketSpec['kind'] | undefined;
  ipv6: SocketSpec['kind'] | undefined;
  /** why SMC is off (entirely or for one family) */
  reason: string | undefined;
}

const NO_SMC_FIX = 'the kernel needs CONFIG_SMC (try: modprobe smc; check: smc-run doctor)';

export function enableFromConfig(config: ShimConfig): EnableResult {
  configureLog(config.debug, config.logFormat);
  const existing = hookState();
  if (existing) return resultOf(existing.specs, undefined);
  const loaded = loadAddon();
  if (!loaded.ok) {
    const reason = `native addon unavailable (${firstLine(loaded.error.message)})`;
    noticeOnce(`${reason}: running on plain TCP; fix: ${addonFix()}`, config.session);
    return { enabled: false, ipv4: undefined, ipv6: undefined, reason };
  }
  const specs: Record<IpFamily, SocketSpec | undefined> = { 4: undefined, 6: undefined };
  const reasons: string[] = [];
  for (const family of [4, 6] as const) {
    const probe = probeFamily(loaded.addon, family, config.proto, config.socketFamily);
    specs[family] = probe.spec;
    if (!probe.spec) reasons.push(`IPv${family}: ${probe.reason ?? 'unknown error'}`);
  }
  if (!specs[4] && !specs[6]) {
    const reason = `no SMC in this kernel (${reasons.join(', ')})`;
    noticeOnce(`${reason}: running on plain TCP; ${NO_SMC_FIX}`, config.session);
    return { enabled: false, ipv4: undefined, ipv6: undefined, reason };
  }
  let reason: string | undefined;
  if (reasons.length > 0) {
    reason = `SMC sockets unavailable for ${reasons.join(', ')}`;
    noticeOnce(`${reason}: those connections use plain TCP, the others SMC`, config.session);
  }
  installHook(loaded.addon, config, specs);
  return resultOf(specs, reason);
}

function resultOf(specs: Record<IpFamily, SocketSpec | undefined>, reason: string | undefined): EnableResult {
  return { enabled: true, ipv4: specs[4]?.kind, ipv6: specs[6]?.kind, reason };
}
