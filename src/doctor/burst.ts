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
  const backlogFix =
    'on the server: listen with a backlog above the burst size, e.g. server.listen(port, host, 4096) ' +
    '(measured in the SMC-D guest: 2,000 connections at once, backlog 4096: none lost, all SMC-D; backlog 511: 1,334 lost without smc-run\'s retry)';
  if (f.somaxconn !== undefined) {
    out.push({
      id: 'burst.backlog',
      status: 'info',
      message:
        `an SMC listener counts its in-progress SMC handshakes against the listen backlog (Node's default ${NODE_DEFAULT_BACKLOG}; ` +
        `net.core.somaxconn ${f.somaxconn} caps it): more concurrent connects than that make clients' SMC handshakes fail ` +
        '(ETIMEDOUT after 6 s, or ECONNRESET; smc-run retries them over TCP, other programs see the error)',
      fix: f.somaxconn < 4096 ? `${backlogFix}; sysctl -w net.core.somaxconn=4096` : backlogFix,
    });
  }
  if (f.limitSmcHs === 0) {
    out.push({
      id: 'burst.limit_smc_hs',
      status: 'info',
      message:
        'net.smc.limit_smc_hs is 0: with 1, a server whose SMC handshake workqueue is congested answers new connections ' +
        'without SMC, so they use TCP from the start (it does not lift the backlog limit; measured: 1,334 -> 297 lost)',
      fix: 'smc-run sysctl set limit_smc_hs=1 (read when the server creates its listening socket)',
    });
  } else if (f.limitSmcHs === 1) {
    out.push({
      id: 'burst.limit_smc_hs',
      status: 'ok',
      message: 'net.smc.limit_smc_hs is 1: a server with a congested handshake workqueue lets new connections use TCP',
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
        'the sign of connection bursts beyond a listen backlog (or a peer that stopped answering during the SMC handshake); ' +
        'such connects fail unless retried (smc-run retries them over TCP, see hookStats().tcpRetries)',
      fix: backlogFix,
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
