// The SMC generic netlink family of a namespace (the caller's, or --target / --netns), opened and
// closed around one piece of work, with errors that say what is wrong (no SMC, not a netns, no privilege).
import { explainNetnsError, openNetns, withNetns, type NamespaceTarget } from '../netns';
import { SmcGenl } from '../netlink/smc-genl';
import { noSmcError } from './errors';

function openSmcGenl(target: NamespaceTarget): SmcGenl {
  return withNetns(target, (ns) => {
    try {
      return SmcGenl.open(ns?.path);
    } catch (e) {
      throw noSmcError(explainNetnsError(e, ns));
    }
  });
}

export function withSmcGenl<T>(target: NamespaceTarget, fn: (g: SmcGenl) => T): T {
  const g = openSmcGenl(target);
  try {
    return fn(g);
  } catch (e) {
    throw noSmcError(e);
  } finally {
    g.close();
  }
}

/**
 * withSmcGenl for work that awaits (the promise API): the family resolved and every dump received off the
 * main thread. The namespace (for a target) is open only until the socket is: the socket keeps it.
 */
export async function withSmcGenlAsync<T>(target: NamespaceTarget, fn: (g: SmcGenl) => Promise<T>): Promise<T> {
  const ns = openNetns(target);
  let g: SmcGenl;
  try {
    g = await SmcGenl.openAsync(ns?.path);
  } catch (e) {
    throw noSmcError(explainNetnsError(e, ns));
  } finally {
    ns?.close();
  }
  try {
    return await fn(g);
  } catch (e) {
    throw noSmcError(e);
  } finally {
    g.close();
  }
}
