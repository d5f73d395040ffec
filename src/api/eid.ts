// UEID / SEID / handshake-limitation API over the SMC generic netlink family.
// The UEID table and the SEID are OS-wide: always the caller's namespace.
import type { SmcGenl } from '../netlink/smc-genl';
import { NoSmcError } from './errors';
import { withSmcGenl } from './genl';
import { normalizeUeid } from '../ueid';

const withGenl = <T>(fn: (g: SmcGenl) => T): T => withSmcGenl({}, fn);

export const listUeids = (): string[] => withGenl((g) => g.ueids());
export const addUeid = (id: string): void => {
  const ueid = normalizeUeid(id);
  withGenl((g) => g.addUeid(ueid));
};
export const removeUeid = (id: string): void => {
  const ueid = normalizeUeid(id);
  withGenl((g) => g.removeUeid(ueid));
};
export const flushUeids = (): void => withGenl((g) => g.flushUeids());

export interface SeidState {
  /**
   * the system EID as the kernel reports it, "" where it has none: off s390 always; on s390 until an
   * ISMv2 device (ISM or loopback-ism) is registered
   */
  seid: string;
  enabled: boolean;
}

export const getSeid = (): SeidState => withGenl((g) => g.seid());

/**
 * The parts of an s390 system EID: "IBM-SYSZ-ISMSEID00000000" (24 bytes) + four hex digits of the CPU
 * identification + the four-digit machine type (the kernel's smc_ism_create_system_eid). undefined for
 * another shape.
 */
export function parseSeid(seid: string): { cpuIdent: string; machineType: string } | undefined {
  const m = /^IBM-SYSZ-ISMSEID00000000([0-9A-F]{4})([0-9A-F]{4})$/.exec(seid);
  return m ? { cpuIdent: m[1] as string, machineType: m[2] as string } : undefined;
}

/**
 * Enables or disables the use of the system EID (s390 only; elsewhere the kernel says EOPNOTSUPP). On
 * s390 the kernel keeps it enabled while no UEID is set (ENOENT): SMCv2 needs one EID or the other.
 */
export function setSeid(enabled: boolean): void {
  try {
    withGenl((g) => {
      try {
        g.setSeid(enabled);
      } catch (e) {
        // before withSmcGenl reads ENOENT as "no SMC in this kernel"
        if (!enabled && (e as { code?: string }).code === 'ENOENT') {
          throw Object.assign(new Error('the system EID stays enabled while no UEID is set (SMCv2 needs one of them): smc-run ueid add <ID> first'), { code: 'ENOENT' });
        }
        throw e;
      }
    });
  } catch (e) {
    if ((e as { code?: string }).code === 'EOPNOTSUPP') {
      throw new NoSmcError('the system EID (SEID) exists on s390 only; elsewhere use a UEID: smc-run ueid add <ID>');
    }
    throw e;
  }
}
