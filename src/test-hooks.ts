// The test and bench hooks of the TypeScript layer, in one place. Each is an SMC_RUN_TEST_* variable that
// the product never sets; read once, when first asked for (the processes that use them get them in their
// environment at start), and never on a connection's path. The others live where the language forces:
// SMC_RUN_TEST_CONNECT_FAULT (src/config.ts: the shim's validated configuration; the LD_PRELOAD library
// reads it too), SMC_RUN_TEST_THREAD_FAIL and SMC_RUN_TEST_NETLINK_NICE (the addon, each read once).
//   SMC_RUN_TEST_NETNS_HOLD_MS=N   hold N ms after a --target/--netns namespace was opened (a test ends the
//                                  target in between: test/kernel/containers/runtimes.test.ts)
//   SMC_RUN_TEST_SYSCTL_HOLD_MS=N  hold N ms after each sysctl write (test/kernel/smcd/sysctl.test.ts)
//   SMC_RUN_TEST_OCI_HOLD_MS=N     hold N ms after the OCI hook switched a container, its lock held (a test
//                                  kills it there: test/kernel/newest/oci-hook.test.ts)
//   SMC_RUN_TEST_DUMP_PACING=0     the promise API's dumps back to back (bench/observability-scale.cjs)

interface TestHooks {
  netnsHoldMs: number;
  sysctlHoldMs: number;
  ociHoldMs: number;
  dumpPacing: boolean;
}

let hooks: TestHooks | undefined;

function testHooks(): TestHooks {
  hooks ??= {
    netnsHoldMs: Number(process.env.SMC_RUN_TEST_NETNS_HOLD_MS ?? 0) || 0,
    sysctlHoldMs: Number(process.env.SMC_RUN_TEST_SYSCTL_HOLD_MS ?? 0) || 0,
    ociHoldMs: Number(process.env.SMC_RUN_TEST_OCI_HOLD_MS ?? 0) || 0,
    dumpPacing: process.env.SMC_RUN_TEST_DUMP_PACING !== '0',
  };
  return hooks;
}

/** Blocks the thread for the hold a test asked for at this point (none unless asked). */
export function holdForTests(point: 'netns' | 'sysctl' | 'oci'): void {
  const h = testHooks();
  const ms = point === 'netns' ? h.netnsHoldMs : point === 'sysctl' ? h.sysctlHoldMs : h.ociHoldMs;
  if (ms > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Whether the promise API paces its dumps (always, unless the bench turned it off). */
export const dumpPacingForTests = (): boolean => testHooks().dumpPacing;
