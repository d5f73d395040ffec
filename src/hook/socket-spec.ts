// Which socket() call makes an "SMC socket" for each IP family, decided once per process by a probe.
import { AF_INET, AF_INET6, AF_SMC, IPPROTO_SMC, SMCPROTO_SMC, SMCPROTO_SMC6 } from '../constants';
import type { NativeAddon } from '../native';
import { isSystemError } from '../native';
import type { ProtoMode, SocketFamilyMode } from '../config';

export type IpFamily = 4 | 6;

export interface SocketSpec {
  domain: number;
  protocol: number;
  /** how the socket is named in logs and stats */
  kind: 'af_smc' | 'ipproto_smc' | 'inet (test mode)';
}

/** Errors that mean "this kernel cannot make that socket at all" (as opposed to EMFILE and friends). */
const UNSUPPORTED = new Set(['EAFNOSUPPORT', 'EPROTONOSUPPORT', 'ESOCKTNOSUPPORT', 'EPFNOSUPPORT', 'EINVAL', 'EPERM', 'EACCES']);

export function candidates(family: IpFamily, proto: ProtoMode, mode: SocketFamilyMode): SocketSpec[] {
  if (mode === 'inet') return [{ domain: family === 4 ? AF_INET : AF_INET6, protocol: 0, kind: 'inet (test mode)' }];
  const afSmc: SocketSpec = { domain: AF_SMC, protocol: family === 4 ? SMCPROTO_SMC : SMCPROTO_SMC6, kind: 'af_smc' };
  const ipproto: SocketSpec = { domain: family === 4 ? AF_INET : AF_INET6, protocol: IPPROTO_SMC, kind: 'ipproto_smc' };
  if (proto === 'af_smc') return [afSmc];
  if (proto === 'ipproto') return [ipproto];
  return [afSmc, ipproto];
}

export interface ProbeResult {
  spec: SocketSpec | undefined;
  /** why no spec works, e.g. "EAFNOSUPPORT" */
  reason: string | undefined;
}

/** Tries each candidate socket() once and keeps the first that the kernel accepts. */
export function probeFamily(addon: NativeAddon, family: IpFamily, proto: ProtoMode, mode: SocketFamilyMode): ProbeResult {
  let reason: string | undefined;
  for (const spec of candidates(family, proto, mode)) {
    try {
      addon.closeFd(addon.createSocket(spec.domain, spec.protocol));
      return { spec, reason: undefined };
    } catch (e) {
      const code = isSystemError(e) ? e.code : String(e);
      reason ??= code;
      if (isSystemError(e) && !UNSUPPORTED.has(e.code)) {
        // e.g. EMFILE at start-up: SMC may well exist; keep the spec and let each socket try.
        return { spec, reason: undefined };
      }
    }
  }
  return { spec: undefined, reason };
}
