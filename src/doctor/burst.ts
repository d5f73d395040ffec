// What doctor says about connection bursts (issue #23): a server whose SMC handshake queue backs up
// makes clients' SMC handshakes time out after the kernel's CLC wait (6 s) with ETIMEDOUT, counted as
// client handshake errors (a server drops them without counting). smc-run retries those connects over
// plain TCP; other programs see the error. Pure: the caller reads the sysctls and counters.
import * as fs from 'node:fs';
import { getSmcSystemStats } from '../api/system';
import type { NamespaceTarget } from '../netns';
import type { Check } from './checks';

export interface BurstFacts {
  /** net.smc.limit_smc_hs (undefined: unreadable or not in this kernel) */
  limitSmcHs: number | undefined;
  /** net.core.somaxconn: the cap on every listen backlog */
  somaxconn: number | undefined;
  /** SMC handshake errors of the namespace since it was created (stats system) */
  handshakeErrors: { client: number; server: number } | undefined;
}

/** Node's listen backlog when the program gives none. */
export const NODE_DEFAULT_BACKLOG = 511;

export function burstChecks(f: BurstFacts): Check[] {
  const out: Check[] = [];
  const cure = 'on the server: smc-run sysctl set limit_smc_hs=1 (busy servers fall back to TCP instead of stalling clients)';
  if (f.limitSmcHs === 0) {
    out.push({
      id: 'burst.limit_smc_hs',
      status: 'info',
      message:
        'net.smc.limit_smc_hs is 0: when many clients connect at once (measured: 1,000+ concurrent connects to one server), ' +
        "the server's SMC handshakes queue up and clients' connects fail with ETIMEDOUT after 6 s " +
        '(smc-run retries them over TCP; programs without it see the error)',
      fix: cure,
    });
  } else if (f.limitSmcHs === 1) {
    out.push({
      id: 'burst.limit_smc_hs',
      status: 'ok',
      message: 'net.smc.limit_smc_hs is 1: under handshake bursts new connections fall back to TCP instead of timing out',
    });
  }
  if (f.somaxconn !== undefined) {
    out.push({
      id: 'burst.somaxconn',
      status: 'info',
      message: `net.core.somaxconn ${f.somaxconn} caps every listen backlog (Node listens with ${NODE_DEFAULT_BACKLOG} unless told otherwise)`,
    });
  }
  const hs = f.handshakeErrors;
  if (hs && hs.client + hs.server > 0) {
    out.push({
      id: 'burst.handshake_errors',
      // cumulative since the namespace started: a hint to look, not a fault now
      status: 'info',
      message:
        `${hs.client} client and ${hs.server} server SMC handshakes failed with an error (not a fallback) in this namespace: ` +
        'the sign of connection bursts (or a peer that stopped answering during the SMC handshake); ' +
        'such connects fail unless retried (smc-run retries them over TCP, see hookStats().tcpRetries)',
      fix: f.limitSmcHs === 1 ? 'spread the clients\' connects, or check the peers named by smc-run stats sockets' : cure,
    });
  }
  return out;
}

/** Reads the facts (somaxconn of this process's namespace, as doctor's other net.core checks). */
export function readBurstFacts(target: NamespaceTarget, limitSmcHs: number | undefined): BurstFacts {
  let somaxconn: number | undefined;
  try {
    somaxconn = Number(fs.readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim());
  } catch {
    somaxconn = undefined;
  }
  let handshakeErrors: BurstFacts['handshakeErrors'];
  try {
    handshakeErrors = getSmcSystemStats(target).handshakeErrors;
  } catch {
    handshakeErrors = undefined; // no SMC genl: the genl check says so
  }
  return { limitSmcHs, somaxconn, handshakeErrors };
}
