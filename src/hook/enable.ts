// Turning SMC on for this thread: load the addon, probe the kernel once per family (once per process:
// worker threads reuse the result), install the hook.
// Every way it can fail ends with the program on TCP and one notice (per process tree), never a throw.
import type { ShimConfig } from '../config';
import { configureLog } from '../log';
import { addonFix, firstLine, loadAddon, type NativeAddon } from '../native';
import { handleClassNotice, handleClassProblem } from './handle-shape';
import { hookState, installHook, tcpHandlePrototype } from './install';
import { bindingPrototype, disarm } from './lazy';
import { noticeOnce } from './notice';
import { ipprotoUnsupported } from './proto-notice';
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

/**
 * The addon failed to load: the notice's reason and fix. Under `node --permission` it is not a broken
 * build: the permission model refuses native addons (ERR_DLOPEN_DISABLED) or the read of the file
 * (ERR_ACCESS_DENIED), and a rebuild changes nothing.
 */
export function addonFailure(error: Error): { reason: string; fix: string } {
  const code = (error as { code?: unknown }).code;
  if (code === 'ERR_DLOPEN_DISABLED') {
    return { reason: 'native addons are disabled by the permission model (node --permission)', fix: 'add --allow-addons to the node options (with --allow-fs-read covering smc-run\'s directory)' };
  }
  if (code === 'ERR_ACCESS_DENIED') {
    return { reason: `the permission model denies reading the native addon (${firstLine(error.message)})`, fix: 'add --allow-fs-read for smc-run\'s directory and --allow-addons to the node options' };
  }
  return { reason: `native addon unavailable (${firstLine(error.message)})`, fix: addonFix() };
}

/**
 * One probe per process: the thread that probes first leaves its result in SMC_RUN_PROBE (with the PID,
 * so child processes, which inherit the variable, probe for themselves), and worker threads started
 * later read it instead of probing again.
 */
const PROBE_ENV = 'SMC_RUN_PROBE';

interface ProbeSet {
  specs: Record<IpFamily, SocketSpec | undefined>;
  reasons: string[];
  /** true when taken over from another thread of this process (its notice is said already) */
  inherited: boolean;
}

function probeKey(config: ShimConfig): string {
  return `${process.pid} ${config.proto} ${config.socketFamily} `;
}

function probeAll(addon: NativeAddon, config: ShimConfig): ProbeSet {
  const key = probeKey(config);
  const saved = process.env[PROBE_ENV];
  if (saved?.startsWith(key)) {
    try {
      const { specs, reasons } = JSON.parse(saved.slice(key.length)) as Omit<ProbeSet, 'inherited'>;
      return { specs: { 4: specs[4] ?? undefined, 6: specs[6] ?? undefined }, reasons, inherited: true };
    } catch {
      // malformed: probe again
    }
  }
  const specs: Record<IpFamily, SocketSpec | undefined> = { 4: undefined, 6: undefined };
  const reasons: string[] = [];
  for (const family of [4, 6] as const) {
    const probe = probeFamily(addon, family, config.proto, config.socketFamily);
    specs[family] = probe.spec;
    if (!probe.spec) reasons.push(`IPv${family}: ${probe.reason ?? 'unknown error'}`);
  }
  process.env[PROBE_ENV] = `${key}${JSON.stringify({ specs: { 4: specs[4] ?? null, 6: specs[6] ?? null }, reasons })}`;
  return { specs, reasons, inherited: false };
}

/**
 * Turns SMC on in this thread with this configuration. When the hook is installed already (the preload
 * did, then the program calls enableSmc(options)), the new options apply from the next socket on.
 * `prototype`: the TCP handle prototype, when the caller has it (the preload).
 */
export function enableFromConfig(config: ShimConfig, prototype?: Record<string | symbol, unknown>): EnableResult {
  configureLog(config.debug, config.logFormat);
  const existing = hookState();
  const loaded = loadAddon();
  if (existing) {
    if (loaded.ok && (existing.config.proto !== config.proto || existing.config.socketFamily !== config.socketFamily)) {
      existing.specs = probeAll(loaded.addon, config).specs;
    }
    existing.config = config;
    return resultOf(existing.specs, existing.specs[4] || existing.specs[6] ? undefined : 'no SMC socket type works for these options');
  }
  if (!loaded.ok) {
    const { reason, fix } = addonFailure(loaded.error);
    noticeOnce(`${reason}: running on plain TCP; fix: ${fix}`, config.session);
    return { enabled: false, ipv4: undefined, ipv6: undefined, reason };
  }
  const { specs, reasons, inherited } = probeAll(loaded.addon, config);
  const say = (message: string): void => {
    if (!inherited) noticeOnce(message, config.session);
  };
  const noIpproto = !specs[4] && !specs[6] ? ipprotoUnsupported(loaded.addon, config, reasons) : undefined;
  if (noIpproto) {
    say(noIpproto.notice);
    return { enabled: false, ipv4: undefined, ipv6: undefined, reason: noIpproto.reason };
  }
  if (!specs[4] && !specs[6]) {
    const reason = `no SMC in this kernel (${reasons.join(', ')})`;
    say(`${reason}: running on plain TCP; ${NO_SMC_FIX}`);
    return { enabled: false, ipv4: undefined, ipv6: undefined, reason };
  }
  let reason: string | undefined;
  if (reasons.length > 0) {
    reason = `SMC sockets unavailable for ${reasons.join(', ')}`;
    say(`${reason}: those connections use plain TCP, the others SMC`);
  }
  // a lazy preload hook still waiting for its first call steps aside: this configuration wins
  let proto = prototype ?? bindingPrototype();
  if (proto) disarm(proto);
  let problem: string | undefined;
  try {
    proto ??= tcpHandlePrototype(loaded.addon);
    problem = handleClassProblem(proto);
  } catch (e) {
    problem = `its prototype could not be found: ${firstLine((e as Error).message)}`;
  }
  if (problem || !proto) {
    const reason = handleClassNotice(problem ?? 'no prototype');
    noticeOnce(reason, config.session);
    return { enabled: false, ipv4: undefined, ipv6: undefined, reason };
  }
  const state = installHook(loaded.addon, config, specs, proto);
  state.probe = inherited ? 'process' : 'own';
  return resultOf(specs, reason);
}

function resultOf(specs: Record<IpFamily, SocketSpec | undefined>, reason: string | undefined): EnableResult {
  return { enabled: true, ipv4: specs[4]?.kind, ipv6: specs[6]?.kind, reason };
}
