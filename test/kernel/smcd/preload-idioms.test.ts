// The LD_PRELOAD library's differential suite on real AF_SMC (lanes smcd-6.12 and smcd-newest): the socket
// idioms of test/fixtures/preload/idioms.c observed without the library (plain TCP), under it without
// rules and with --include (SMC-D), and with --exclude (decided in place: the kernel switches each SMC
// socket to TCP before connect, fallback reason OPTUNSUPP). Every observation must be identical; the
// namespace's SMC counters say which transport each run used.
import * as fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getSmcSystemStats } from '../../../src/api/system';
import { buildFixture, debugLines, tempDir } from '../../helpers/preload-lib';
import { run, smcRun } from '../../helpers/run';

const observed = (stdout: string): string[] => stdout.split('\n').filter((l) => l.startsWith('{'));

/**
 * Where an SMC socket itself reads differently from TCP (the kernel's doing, for any SMC socket, with or
 * without smc-run; docs/limitations.md): SO_SNDBUF reads back the size of SMC's own send buffer (64 KiB
 * here, not TCP's doubled 131072); SO_PRIORITY reads the SMC socket's value, while IP_TOS set the priority
 * of SMC's internal TCP socket only (TCP: IP_TOS 0x10 makes it 6); TCP_CORK holds data until it is
 * cleared (net/smc/smc_tx.c: "the applications should know how/when to uncork it"), where TCP sends it
 * after 200 ms, so a program that never uncorks gets no echo.
 */
const SMC_KERNEL: Record<string, Record<string, unknown>> = {
  options: { sndbuf: 65536, priority: 3 },
  cork: { echo: 0 },
};
const overSmc = (line: string): string => {
  const o = JSON.parse(line) as Record<string, unknown>;
  const known = SMC_KERNEL[String(o.idiom)];
  return known ? JSON.stringify({ ...o, ...known }) : line;
};

/** Client-side SMC-D handshakes and OPTUNSUPP fallbacks so far in this namespace. */
function clientCounts(): { smcd: number; optunsupp: number; fallbacks: number } {
  const s = getSmcSystemStats();
  return {
    smcd: s.smcd.connections.clientV1 + s.smcd.connections.clientV2,
    optunsupp: s.fallbacks.client.reasons.find((r) => r.name === 'OPTUNSUPP')?.count ?? 0,
    fallbacks: s.fallbacks.client.total,
  };
}

describe('the same program with and without the LD_PRELOAD library, on SMC-D', () => {
  let dir = '';
  let idioms = '';
  let baseline: string[] = [];
  const t0 = Date.now();
  beforeAll(async () => {
    dir = tempDir();
    idioms = buildFixture(dir, 'idioms');
    const r = await run(idioms, []);
    expect(r.code, r.stderr).toBe(0);
    baseline = observed(r.stdout);
    expect(baseline).toHaveLength(17);
  });
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    console.log(`preload-idioms (smcd): ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  });

  // 17 idioms, 15 of them with a connection that completes (refused has none; fork-after-connect one)
  for (const v of [
    { name: 'no rules', args: [] as string[], smc: true },
    { name: '--include of every destination', args: ['--include', '127.0.0.0/8', '--include', '::1'], smc: true },
    { name: '--exclude of every destination', args: ['--exclude', '127.0.0.0/8', '--exclude', '::1'], smc: false },
  ]) {
    it(`${v.name}: every observation identical, the connections ${v.smc ? 'SMC-D' : 'plain TCP decided in place (OPTUNSUPP)'}`, async () => {
      const before = clientCounts();
      const r = await smcRun(['-d', ...v.args, idioms]);
      const after = clientCounts();
      expect(r.code, r.stderr).toBe(0);
      const got = observed(r.stdout);
      // idiom by idiom, so that a difference names its idiom and shows both lines; over SMC the kernel's
      // own differences (SMC_KERNEL) are expected exactly, nothing else may differ
      const want = baseline.map((line) => (v.smc ? overSmc(line) : line));
      want.forEach((line, i) => {
        if (got[i] !== line) console.log(`${v.name}: differs\n  want: ${line}\n  got:  ${got[i]}`);
      });
      want.forEach((line, i) => expect(got[i], `${v.name}: idiom ${i + 1} of ${want.length}`).toBe(line));
      expect(got).toHaveLength(want.length);
      const smcd = after.smcd - before.smcd;
      const optunsupp = after.optunsupp - before.optunsupp;
      console.log(`${v.name}: client SMC-D +${smcd}, OPTUNSUPP +${optunsupp}, fallbacks +${after.fallbacks - before.fallbacks}`);
      if (v.smc) {
        expect(smcd).toBeGreaterThanOrEqual(15);
        expect(optunsupp).toBe(0);
      } else {
        expect(smcd).toBe(0);
        expect(optunsupp).toBeGreaterThanOrEqual(15);
        expect(debugLines(r.stderr).filter((l) => l.startsWith('connect ')).every((l) => l.endsWith('excluded by policy: plain TCP'))).toBe(true);
      }
    });
  }
});
