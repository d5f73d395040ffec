// The SMC generic netlink family of a namespace (the caller's, or --target / --netns), opened and
// closed around one piece of work, with errors that say what is wrong (no SMC, not a netns, no privilege).
import { explainNetnsError, resolveNetns, type NamespaceTarget } from '../netns';
import { SmcGenl } from '../netlink/smc-genl';
import { noSmcError } from './errors';

export function withSmcGenl<T>(target: NamespaceTarget, fn: (g: SmcGenl) => T): T {
  const ns = resolveNetns(target);
  let g: SmcGenl;
  try {
    g = SmcGenl.open(ns);
  } catch (e) {
    throw noSmcError(explainNetnsError(e, ns));
  }
  try {
    return fn(g);
  } catch (e) {
    throw noSmcError(e);
  } finally {
    g.close();
  }
}
