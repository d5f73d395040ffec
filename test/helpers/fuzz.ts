// Fuzzing with a fixed seed: every fast-check property in the host suites runs from one seed (a failure in
// CI is the same failure on any machine), scaled by SMC_RUN_FUZZ_SCALE for the long run (npm run
// bench:fuzz), and, with SMC_RUN_FUZZ_REPORT=FILE, appends one JSON line per property with what it ran.
// Installed for every test file by test/helpers/fuzz-setup.ts (vitest.config.mts setupFiles).
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { expect } from 'vitest';

const REPO = path.resolve(__dirname, '..', '..');

function numberFromEnv(name: string, fallback: number, valid: (n: number) => boolean): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!valid(n)) throw new Error(`${name}=${text}: not a valid value`);
  return n;
}

/** The seed of every property (SMC_RUN_FUZZ_SEED to try another). */
export const FUZZ_SEED = numberFromEnv('SMC_RUN_FUZZ_SEED', 20_261_203, (n) => Number.isSafeInteger(n));
/** A factor on every property's number of runs (1 in npm test). */
export const FUZZ_SCALE = numberFromEnv('SMC_RUN_FUZZ_SCALE', 1, (n) => Number.isFinite(n) && n > 0);

/** A property's number of runs: its npm-test count times the scale. */
export const fuzzRuns = (runs: number): number => Math.max(1, Math.round(runs * FUZZ_SCALE));

/** One line of SMC_RUN_FUZZ_REPORT. */
export interface FuzzRecord {
  file: string;
  test: string;
  seed: number;
  runs: number;
  skips: number;
  failed: boolean;
}

function report(details: fc.RunDetails<unknown>): void {
  const out = process.env.SMC_RUN_FUZZ_REPORT;
  if (out) {
    const state = expect.getState();
    const record: FuzzRecord = {
      file: path.relative(REPO, state.testPath ?? ''),
      test: state.currentTestName ?? '',
      seed: details.seed,
      runs: details.numRuns,
      skips: details.numSkips,
      failed: details.failed,
    };
    fs.appendFileSync(out, `${JSON.stringify(record)}\n`);
  }
  // the reporter replaces fast-check's own, which throws on a failure: so does this one
  if (details.failed) throw new Error(fc.defaultReportMessage(details), { cause: details.errorInstance });
}

/** One of the recorded messages with up to 8 bytes changed, then cut or extended by up to 80 bytes. */
export function mutatedMessage(recorded: readonly Buffer[]): fc.Arbitrary<Buffer> {
  const edits = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 });
  return fc.tuple(fc.nat(), edits, fc.integer({ min: -80, max: 80 })).map(([which, changes, resize]) => {
    const b = Buffer.from(recorded[which % recorded.length] as Buffer);
    for (const [at, v] of changes) b[at % b.length] = v;
    return resize < 0 ? b.subarray(0, Math.max(0, b.length + resize)) : Buffer.concat([b, Buffer.alloc(resize, 0xa5)]);
  });
}

export function configureFuzzing(): void {
  fc.configureGlobal({ seed: FUZZ_SEED, numRuns: fuzzRuns(100), reporter: report });
}
