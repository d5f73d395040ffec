// Driving the peer agent in SMC-R guest b from tests in guest a (see test/vm/smcr/peer-agent.cjs).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Conn } from './run';

const RUN = process.env.SMC_RUN_VM_RUN ?? '';
const DIR = path.join(RUN, 'agent');

/**
 * The agent serves cmd-1, cmd-2, ... in order for the whole boot, while each test file (and the suite's
 * second run) is a fresh process: the next number comes from the directory, not from a counter here.
 * Test files run one at a time, so two writers never race for a number.
 */
function nextSeq(): number {
  const used = fs.readdirSync(DIR).map((f) => /^cmd-(\d+)\.json$/.exec(f)?.[1]).filter((x): x is string => x !== undefined).map(Number);
  return used.length ? Math.max(...used) + 1 : 1;
}

export const PEER_IP = process.env.SMC_RUN_PEER_IP ?? '';
export const PEER_IP6 = process.env.SMC_RUN_PEER_IP6 ?? '';

export async function peer<T = Record<string, unknown>>(cmd: Record<string, unknown>, timeoutMs = 120_000): Promise<T> {
  fs.mkdirSync(DIR, { recursive: true });
  const n = nextSeq();
  const file = path.join(DIR, `cmd-${n}.json`);
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(cmd));
  fs.renameSync(`${file}.tmp`, file);
  const res = path.join(DIR, `res-${n}.json`);
  const end = Date.now() + timeoutMs;
  while (!fs.existsSync(res)) {
    if (Date.now() > end) throw new Error(`peer agent: no answer to ${JSON.stringify(cmd)} in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return JSON.parse(fs.readFileSync(res, 'utf8')) as T;
}

export async function startPeerServer(name: string, args: string[], opts: { plain?: boolean } = {}): Promise<number> {
  const r = await peer<{ port?: number; error?: string }>({ op: 'start', name, args, plain: opts.plain ?? false });
  if (r.port === undefined) throw new Error(`peer server ${name}: ${r.error}`);
  return r.port;
}

export async function peerConns(name: string, n: number, ms = 60_000): Promise<Conn[]> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await peer<{ conns: Conn[] }>({ op: 'conns', name });
    if (r.conns.length >= n || Date.now() > end) return r.conns;
    await new Promise((res) => setTimeout(res, 300));
  }
}
