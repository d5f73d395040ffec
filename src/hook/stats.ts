// Counters of what the hook did in this thread; read through hookStats() (tests, doctor, debugging).
export interface HookStats {
  /** sockets created by the addon and adopted by a TCP handle */
  smc: number;
  /** sockets left to libuv (plain TCP) because policy excluded them */
  excluded: number;
  /** sockets left to libuv because SMC is unavailable for their family */
  unavailable: number;
  /** sockets left to libuv because the addon or handle.open failed for them */
  errors: number;
  byOp: Record<string, number>;
  /** client connects whose SMC handshake failed and that were retried over plain TCP */
  tcpRetries: number;
  /** connections an SMC listener's accept() failed for (their handshake failed after being queued): not passed to the server */
  acceptErrors: number;
}

export function newStats(): HookStats {
  return { smc: 0, excluded: 0, unavailable: 0, errors: 0, byOp: {}, tcpRetries: 0, acceptErrors: 0 };
}
