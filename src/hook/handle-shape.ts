// What the hook needs of Node's internal TCP handle class (lib/net.js's `TCP` from tcp_wrap), checked
// before it is installed. A Node whose class differs (a method renamed, moved or made read-only, fd read
// another way) gets one notice and plain TCP instead of a hook that half works or throws.
import { assignable, HOOKED_METHODS } from './lazy';

type Proto = Record<string | symbol, unknown>;

/** Methods the hook calls on a handle besides the ones it replaces. */
const CALLED = ['open', 'getsockname'] as const;

/** Why this TCP handle prototype can't carry the hook, or undefined when it can. */
export function handleClassProblem(proto: Proto): string | undefined {
  for (const name of [...HOOKED_METHODS, ...CALLED]) {
    if (typeof proto[name] !== 'function') return `TCP.prototype.${name} is ${proto[name] === undefined ? 'missing' : `a ${typeof proto[name]}`}`;
  }
  for (const name of HOOKED_METHODS) if (!assignable(proto, name)) return `TCP.prototype.${name} cannot be replaced`;
  if (!('fd' in proto)) return 'TCP handles have no fd';
  return undefined;
}

export function handleClassNotice(problem: string): string {
  return `this Node's TCP handle class differs from what smc-run knows (${problem}; Node ${process.version}): running on plain TCP; check: smc-run doctor`;
}
