// What the hook did to a TCP handle, kept as properties of the handle. A property, not a WeakSet: a WeakSet
// entry gives the GC ephemeron work for every handle (figures: bench/REPORT.md, "Hook overhead on the host").
// Registry symbols: the preload bundle and dist/index.js have their own module copies.

/** The handle holds an SMC socket the hook made: 'bind' when made at bind (the destination is still to decide), 'open' at connect/listen. */
const SMC_SOCKET = Symbol.for('smc-run.smc-socket');
/** The program bound the handle and the policy left it plain TCP for its local address: the destination may still want SMC. */
const TCP_AT_BIND = Symbol.for('smc-run.tcp-at-bind');

export type SmcMark = 'bind' | 'open';
type Marked = { [SMC_SOCKET]?: SmcMark; [TCP_AT_BIND]?: true };

/** Whether the handle's current socket is one the hook made as SMC. */
export function wasCreatedAsSmc(handle: object): boolean {
  return (handle as Marked)[SMC_SOCKET] !== undefined;
}

export function smcMark(handle: object): SmcMark | undefined {
  return (handle as Marked)[SMC_SOCKET];
}

export function markSmc(handle: object, how: SmcMark): void {
  (handle as Marked)[SMC_SOCKET] = how;
  if ((handle as Marked)[TCP_AT_BIND]) delete (handle as Marked)[TCP_AT_BIND];
}

/** The socket under the handle was replaced by a plain TCP one (a TCP retry, a policy decision at connect). */
export function unmarkSmc(handle: object): void {
  delete (handle as Marked)[SMC_SOCKET];
}

export function markTcpAtBind(handle: object): void {
  (handle as Marked)[TCP_AT_BIND] = true;
}

export function wasTcpAtBind(handle: object): boolean {
  return (handle as Marked)[TCP_AT_BIND] === true;
}
