// UEID / SEID / handshake-limitation API over the SMC generic netlink family.
import { SmcGenl } from '../netlink/smc-genl';
import { noSmcError } from './errors';
import { normalizeUeid } from '../ueid';

function withGenl<T>(fn: (g: SmcGenl) => T, netnsPath?: string): T {
  try {
    return SmcGenl.with(netnsPath, fn);
  } catch (e) {
    throw noSmcError(e);
  }
}

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
