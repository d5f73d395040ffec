// Real-kernel suites, run inside the guests by test/vm/run.sh's lanes. A suite is chosen by name
// (SMC_RUN_KERNEL_SUITE, or derived from the guest for the 6.12 lanes); an unknown name is an error, never
// an empty run. Sequential: tests share one kernel (UEID table, sysctls, counters). No caches: the guest
// sees the repo over 9p.
import * as os from 'node:os';
import * as path from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';

const SUITES: Record<string, string[]> = {
  // the integration files that also run on the host (they assert SMC when SMC_RUN_EXPECT is set) plus the
  // kernel-only tests
  smcd: ['test/integration/paths.test.ts', 'test/integration/sockopt.test.ts', 'test/integration/promises.test.ts', 'test/integration/example.test.ts', 'test/kernel/smcd/**/*.test.ts', 'test/kernel/common/**/*.test.ts',
    // crun and podman (#21): 6.12 only (its guest kernel has the cgroup2 the runtimes need)
    'test/kernel/containers/**/*.test.ts'],
  // the SMC-D suite on the newest kernel Debian serves (lane smcd-newest: DIBS loopback, 6.19+ sysctls)
  'smcd-newest': [
    'test/integration/paths.test.ts', 'test/integration/sockopt.test.ts', 'test/integration/promises.test.ts',
    'test/kernel/smcd/**/*.test.ts', 'test/kernel/newest/**/*.test.ts', 'test/kernel/common/**/*.test.ts',
  ],
  // connection bursts (#23, lane smcd-burst): 6.12 only (they pin down this kernel's handshake-queue
  // behaviour), in a lane of their own that runs with no other lane beside it: their handshakes time out
  // when other guests take the machine's cores
  'smcd-burst': ['test/kernel/smcd-burst/**/*.test.ts'],
  smcr: ['test/kernel/smcr/**/*.test.ts', 'test/kernel/common/**/*.test.ts'],
  // ends the peer guest: its own run, after the rest
  'smcr-last': ['test/kernel/smcr-last/**/*.test.ts'],
  // s390x, big-endian (lane s390x): every netlink feature on an s390x kernel
  s390x: ['test/kernel/s390x/**/*.test.ts', 'test/kernel/common/**/*.test.ts'],
  // Debian 12's 6.1 over SoftRoCE (lane smcr-6.1): the core subset and the checks every lane runs
  'smcr-6.1': ['test/kernel/k61/**/*.test.ts', 'test/kernel/common/**/*.test.ts'],
};

// files a suite's globs take in but leave to another lane
const EXCLUDE: Record<string, string[]> = {
  // the exporter with Prometheus and its alerts is userland over the stats that `stats system` reads, and
  // system-stats.test.ts proves those on this kernel: the Prometheus file runs in lane smcd-6.12
  'smcd-newest': ['test/kernel/smcd/prometheus.test.ts'],
};

function suiteName(): string {
  if (process.env.SMC_RUN_KERNEL_SUITE) return process.env.SMC_RUN_KERNEL_SUITE;
  const guest = process.env.SMC_RUN_GUEST_NAME ?? 'smcd';
  if (guest === 'smcd') return 'smcd';
  if (guest === 'a') return process.env.SMC_RUN_SUITE_PHASE === 'last' ? 'smcr-last' : 'smcr';
  throw new Error(`vitest.kernel.config: no suite for guest "${guest}" (set SMC_RUN_KERNEL_SUITE)`);
}

const name = suiteName();
const include = SUITES[name];
if (!include) throw new Error(`vitest.kernel.config: unknown suite "${name}" (known: ${Object.keys(SUITES).join(', ')})`);

export default defineConfig({
  cacheDir: path.join(os.tmpdir(), 'smc-run-vitest-cache'),
  test: {
    include,
    exclude: [...configDefaults.exclude, ...(EXCLUDE[name] ?? [])],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
  },
});
