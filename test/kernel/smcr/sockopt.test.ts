// TCP_CORK / TCP_NODELAY passthrough over SMC-R (client in guest a, echo server in guest b), with the
// kernel's counters as witnesses. The counters are read in the initial namespaces as deltas: SMC-R needs
// the RoCE device, which lives there (a fresh namespace has none); nothing else runs during the suite.
import * as fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPECT_MODE, runScenario, smcRun, type ScenarioResult } from '../../helpers/run';
import { PEER_IP, peer, peerConns, startPeerServer } from '../../helpers/peer';
import type { SmcSystemStats } from '../../../src/stats/system';

type CorkResult = ScenarioResult & { beforeRelease?: number; afterRelease?: string; releaseMs?: number; reads?: number };

const RXE_SENT = '/sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts';

async function localStats(): Promise<SmcSystemStats> {
  const r = await smcRun(['stats', 'system', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { system: SmcSystemStats }).system;
}

async function peerStats(): Promise<SmcSystemStats> {
  const r = await peer<{ code: number; stdout: string; stderr: string }>({ op: 'run', argv: ['node', 'bin/smc-run', 'stats', 'system', '--json'] });
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { system: SmcSystemStats }).system;
}

async function corkScenario(mode: string, port: number): Promise<CorkResult> {
  const { run, results } = await runScenario('cork.cjs', [mode, PEER_IP, String(port)], { CORK_HOLD_MS: '3000' });
  const r = results[0] as CorkResult | undefined;
  expect(r?.ok, run.stdout + run.stderr).toBe(true);
  expect(r?.conns[0]).toMatchObject({ side: 'client', mode: 'smcr', fallback: null });
  return r as CorkResult;
}

describe.runIf(EXPECT_MODE === 'smcr')('TCP_CORK / TCP_NODELAY over SMC-R', () => {
  let port = 0;
  beforeAll(async () => {
    port = await startPeerServer('cork-echo', ['server', '0.0.0.0']);
  });

  for (const mode of ['cork', 'nodelay'] as const) {
    it(`${mode}: a corked 10-byte write does not reach the peer until released; the ${mode === 'cork' ? 'CORK' : 'NDLY'} counter moves by one`, async () => {
      const before = await localStats();
      const r = await corkScenario(mode, port);
      // 3 s corked: an uncorked write comes back in well under a second even over SoftRoCE under TCG
      expect(r.beforeRelease).toBe(0);
      expect(r.afterRelease).toBe('0123456789');
      const after = await localStats();
      const cork = after.smcr.calls.cork - before.smcr.calls.cork;
      const nodelay = after.smcr.calls.nodelay - before.smcr.calls.nodelay;
      console.log(`SMC-R ${mode}: released after ${r.releaseMs} ms; CORK +${cork}, NDLY +${nodelay}`);
      // the kernel counts clearing TCP_CORK and setting TCP_NODELAY on a connected SMC socket
      expect({ cork, nodelay }).toEqual(mode === 'cork' ? { cork: 1, nodelay: 0 } : { cork: 0, nodelay: 1 });
    });
  }

  describe('withTcpCork with net.smc.autocorking_size = 0', () => {
    beforeAll(async () => {
      const r = await smcRun(['sysctl', 'set', 'autocorking_size=0']);
      expect(r.code, r.stderr).toBe(0);
    });
    afterAll(async () => {
      await smcRun(['sysctl', 'set', 'autocorking_size=65536']);
    });

    it('64 one-byte writes leave as one batch: fewer RoCE packets sent and fewer reads at the peer than without it', async () => {
      const measure = async (mode: 'batch' | 'writes') => {
        const pkts0 = Number(fs.readFileSync(RXE_SENT, 'utf8'));
        const peer0 = await peerStats();
        const r = await corkScenario(mode, port);
        const pkts = Number(fs.readFileSync(RXE_SENT, 'utf8')) - pkts0;
        const peer1 = await peerStats();
        return { pkts, peerReads: peer1.smcr.requests.rx - peer0.smcr.requests.rx, echoReads: r.reads ?? -1 };
      };
      const plain = await measure('writes');
      const batched = await measure('batch');
      console.log(`64 x 1 B over SMC-R, autocorking off: plain ${JSON.stringify(plain)}; withTcpCork ${JSON.stringify(batched)}`);
      // the peer reads the batch at once (plus, maybe, the end of stream before we look)
      expect(batched.peerReads).toBeGreaterThanOrEqual(1);
      expect(batched.peerReads).toBeLessThanOrEqual(2);
      expect(batched.peerReads).toBeLessThan(plain.peerReads);
      expect(batched.pkts).toBeLessThan(plain.pkts);
      const conns = await peerConns('cork-echo', 4);
      for (const c of conns) expect(c).toMatchObject({ side: 'server', mode: 'smcr', fallback: null });
    });
  });
});
