// An SMC listener's accept() can fail for one connection. The kernel's smc_accept() hands back the queued
// socket's own error (sock_error) when that connection's SMC handshake failed after the listener queued it
// (net/smc/af_smc.c); a TCP listener's accept never fails for one connection that went wrong. libuv passes
// such an error to Node's onconnection, and net.Server emits it: a server with no 'error' listener crashes,
// which TCP would never have made it do. For listeners on SMC sockets the guard drops these per-connection
// errors (the client's connect fails, and smc-run's TCP retry retries it, as for a reset connection under
// TCP); errors of the listener or of the process (EMFILE, ENFILE, ENOBUFS, ENOMEM, EINVAL ...) still reach
// the server, as they do with TCP.
import { constants } from 'node:os';

const E = constants.errno;
/** libuv's codes (-errno on Linux) of errors that belong to one connection, not to the listener */
const ONE_CONNECTION = new Set(
  [E.ECONNRESET, E.ETIMEDOUT, E.ECONNREFUSED, E.ECONNABORTED, E.EPIPE, E.EPROTO, E.ENETUNREACH, E.EHOSTUNREACH, E.ENETDOWN, E.ENOTCONN].map((n) => -n),
);
const GUARDED = Symbol.for('smc-run.accept-guard');

/** Node's callback: (status, client handle), called by its TCP wrap for every accepted connection */
type OnConnection = ((this: unknown, status: unknown, client: unknown) => unknown) & { [GUARDED]?: true };

/**
 * Wraps the handle's onconnection (net.Server sets it before it calls listen) so that an accept error of
 * one connection is reported to `dropped` instead of the server. Does nothing when there is no callback
 * or it is wrapped already.
 */
export function guardAccept(handle: { onconnection?: unknown }, dropped: (status: number) => void): void {
  const original = handle.onconnection as OnConnection | undefined;
  if (typeof original !== 'function' || original[GUARDED]) return;
  // runs for every accepted connection: no rest parameters (an array per call), one Set lookup on errors only
  const guarded: OnConnection = function smcRunAcceptGuard(this: unknown, status: unknown, client: unknown): unknown {
    if (status !== 0 && typeof status === 'number' && ONE_CONNECTION.has(status)) {
      dropped(status);
      return undefined;
    }
    return original.call(this, status, client);
  };
  guarded[GUARDED] = true;
  handle.onconnection = guarded;
}
