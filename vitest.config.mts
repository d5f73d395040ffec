// Host suite: unit tests and integration tests on this machine's kernel (no SMC: the launcher's test
// mode makes the addon create plain inet sockets, so every hook path is still exercised).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // every fast-check property runs from one fixed seed (test/helpers/fuzz.ts)
    setupFiles: ['test/helpers/fuzz-setup.ts'],
  },
});
