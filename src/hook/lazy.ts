// The preload's start-up cost is patching five methods of the TCP handle prototype, nothing more: each
// patched method, on its first call in this thread (the program's first TCP handle operation), puts the
// originals back and runs the real start (addon load, probe, policy parsing, hook install), then does
// what the method now is (hooked, or the original when SMC stayed off).
//
// The prototype comes from process.binding('tcp_wrap'): the one object net.js uses, reached without
// loading node:net or the addon. process.binding is documentation-deprecated (DEP0111, a warning only
// under --pending-deprecation) and denied under the permission model; in those cases bindingPrototype()
// answers undefined and the preload starts eagerly (the prototype is then captured through a socket).

export const HOOKED_METHODS = ['connect', 'connect6', 'bind', 'bind6', 'listen'] as const;

type Proto = Record<string | symbol, unknown>;
type Method = (this: unknown, ...args: unknown[]) => unknown;

/** The originals while the lazy wrappers are in place (on the prototype: one per thread, any module copy). */
const LAZY = Symbol.for('smc-run.lazy');

function pendingDeprecation(): boolean {
  return (
    process.execArgv.includes('--pending-deprecation') ||
    /(^|\s)--pending-deprecation(\s|$)/.test(process.env.NODE_OPTIONS ?? '') ||
    process.env.NODE_PENDING_DEPRECATION === '1'
  );
}

/** The TCP handle prototype of this thread, or undefined where process.binding may not be used. */
export function bindingPrototype(): Proto | undefined {
  if (pendingDeprecation()) return undefined;
  try {
    const binding = (process as unknown as { binding(name: string): { TCP?: { prototype?: Proto } } }).binding('tcp_wrap');
    return binding.TCP?.prototype;
  } catch {
    return undefined; // ERR_ACCESS_DENIED under --permission
  }
}

/** Whether `proto[name] = fn` replaces the method (strict mode throws on a read-only or getter-only property). */
export function assignable(proto: Proto, name: string): boolean {
  for (let o: object | null = proto; o; o = Object.getPrototypeOf(o) as object | null) {
    const d = Object.getOwnPropertyDescriptor(o, name);
    if (!d) continue;
    if ('value' in d) return d.writable === true && (o === proto || Object.isExtensible(proto));
    return typeof d.set === 'function';
  }
  return Object.isExtensible(proto);
}

/**
 * Whether this prototype has the methods the lazy wrappers replace, as functions that can be replaced.
 * A future Node whose TCP handle class differs fails this, and the preload then starts eagerly: the
 * runtime's full check says why in one notice.
 */
export function canArm(proto: Proto): boolean {
  return HOOKED_METHODS.every((name) => typeof proto[name] === 'function' && assignable(proto, name));
}

/** Whether the lazy wrappers are still waiting for their first call. */
export function isArmed(proto: Proto): boolean {
  return proto[LAZY] !== undefined;
}

/** Puts the originals back (the first call does this, and so does enableSmc() before installing). */
export function disarm(proto: Proto): void {
  const originals = proto[LAZY] as Record<string, Method> | undefined;
  if (!originals) return;
  for (const [name, fn] of Object.entries(originals)) proto[name] = fn;
  delete proto[LAZY];
}

/** Arms the wrappers; `start` runs once, at the first call of any of them. False when already armed. */
export function arm(proto: Proto, start: () => void): boolean {
  if (proto[LAZY] !== undefined || !canArm(proto)) return false;
  const originals: Record<string, Method> = {};
  let started = false;
  for (const name of HOOKED_METHODS) {
    const original = proto[name];
    if (typeof original !== 'function') continue;
    originals[name] = original as Method;
    const lazy = function smcRunLazy(this: unknown, ...args: unknown[]): unknown {
      if (!started) {
        started = true;
        disarm(proto);
        try {
          start();
        } catch {
          // the shim never throws into the program
        }
      }
      const current = proto[name];
      return (typeof current === 'function' && current !== lazy ? (current as Method) : (original as Method)).apply(this, args);
    };
    proto[name] = lazy;
  }
  proto[LAZY] = originals;
  return true;
}
