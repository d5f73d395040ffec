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
  /** the system EID, "" where the machine has none (off s390) */
  seid: string;
  enabled: boolean;
}

export const getSeid = (): SeidState => withGenl((g) => g.seid());

/** Enables or disables the use of the system EID (s390 only; elsewhere the kernel says EOPNOTSUPP). */
export function setSeid(enabled: boolean): void {
  try {
    withGenl((g) => g.setSeid(enabled));
  } catch (e) {
    if ((e as { code?: string }).code === 'EOPNOTSUPP') {
      throw new NoSmcError('the system EID (SEID) exists on s390 only; elsewhere use a UEID: smc-run ueid add <ID>');
    }
    throw e;
  }
}
