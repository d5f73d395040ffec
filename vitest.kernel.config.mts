// Real-kernel suite, run inside the SMC guests by test/vm/run.sh: the integration files that also run
// on the host (they assert SMC when SMC_RUN_EXPECT is set) plus the kernel-only tests. Sequential:
// tests share one kernel (UEID table, sysctls, counters). No caches: the guest sees the repo over 9p.
import * as os from 'node:os';
import * as path from 'node:path';
import { defineConfig } from 'vitest/config';

const guest = process.env.SMC_RUN_GUEST_NAME ?? 'smcd';

export default defineConfig({
  cacheDir: path.join(os.tmpdir(), 'smc-run-vitest-cache'),
  test: {
    include:
      guest === 'smcd'
        ? ['test/integration/paths.test.ts', 'test/integration/sockopt.test.ts', 'test/kernel/smcd/**/*.test.ts']
        : process.env.SMC_RUN_SUITE_PHASE === 'last'
          ? ['test/kernel/smcr-last/**/*.test.ts'] // ends the peer guest: its own run, after the rest
          : ['test/kernel/smcr/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
  },
});
