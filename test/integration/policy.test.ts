// --include/--exclude decide by the destination for every client socket, also when the program binds
// first (localAddress, localPort, happy eyeballs with localPort): the socket libuv creates at bind
// comes from the local address, so the hook re-decides at connect and swaps the socket under the same
// fd, keeping the bind and the options already set. Test mode (inet sockets from the addon): "SMC" is
// what the hook adopted (isSmcSocket, hook counters, debug lines); the SMC-D guest checks the kernel's
// view in test/kernel/smcd/policy.test.ts.
import { describe, expect, it } from 'vitest';
import { EXPECT_MODE, runScenario, type ScenarioResult } from '../helpers/run';

interface Seen {
  isSmc: boolean;
  conn: { mode: string };
  fd: number;
  localAddress: string;
  localPort: number;
  requestedLocalPort?: number;
  noDelay: boolean;
}

interface Case {
  name: string;
  rules: string[];
  listen: string;
  connect: Record<string, unknown>;
  smc: boolean;
  /** the connected socket was swapped at connect (bind decided otherwise) */
  swapped?: boolean;
}

// happy eyeballs over ::1 (nothing listens there: refused) then 127.0.0.1 (the scenario's lookup answers both)
const HE = { host: 'localhost', dualLookup: true, autoSelectFamily: true, autoSelectFamilyAttemptTimeout: 2000 };

const CASES: Case[] = [
  // the report of issue 29: an excluded destination with a wildcard localAddress went over SMC
  { name: 'exclude, localAddress 0.0.0.0', rules: ['--exclude', '127.0.0.2/32'], listen: '127.0.0.2', connect: { host: '127.0.0.2', localAddress: '0.0.0.0' }, smc: false, swapped: true },
  { name: 'exclude, localAddress 127.0.0.1', rules: ['--exclude', '127.0.0.2/32'], listen: '127.0.0.2', connect: { host: '127.0.0.2', localAddress: '127.0.0.1' }, smc: false, swapped: true },
  { name: 'exclude, localPort only', rules: ['--exclude', '127.0.0.2/32'], listen: '127.0.0.2', connect: { host: '127.0.0.2', localPort: 'free' }, smc: false, swapped: true },
  { name: 'exclude, localAddress and localPort', rules: ['--exclude', '127.0.0.2/32'], listen: '127.0.0.2', connect: { host: '127.0.0.2', localAddress: '127.0.0.1', localPort: 'free' }, smc: false, swapped: true },
  // the local address is excluded, the destination is not: SMC
  { name: 'exclude the local address only', rules: ['--exclude', '127.0.0.2/32'], listen: '127.0.0.1', connect: { host: '127.0.0.1', localAddress: '127.0.0.2' }, smc: true, swapped: true },
  { name: 'exclude [::1], localAddress ::', rules: ['--exclude', '[::1]/128'], listen: '::1', connect: { host: '::1', localAddress: '::' }, smc: false, swapped: true },
  { name: 'exclude [::1], localPort only (IPv6)', rules: ['--exclude', '[::1]/128'], listen: '::1', connect: { host: '::1', localPort: 'free' }, smc: false, swapped: true },
  { name: 'include 127.0.0.1, other destination, localAddress 0.0.0.0', rules: ['--include', '127.0.0.1/32'], listen: '127.0.0.3', connect: { host: '127.0.0.3', localAddress: '0.0.0.0' }, smc: false, swapped: true },
  { name: 'include 127.0.0.1, that destination from a local address not included', rules: ['--include', '127.0.0.1/32'], listen: '127.0.0.1', connect: { host: '127.0.0.1', localAddress: '127.0.0.2' }, smc: true, swapped: true },
  { name: 'include 127.0.0.1, IPv6 destination, localAddress ::', rules: ['--include', '127.0.0.1/32'], listen: '::1', connect: { host: '::1', localAddress: '::' }, smc: false, swapped: true },
  { name: 'include [::1], that destination, localAddress ::1', rules: ['--include', '[::1]/128'], listen: '::1', connect: { host: '::1', localAddress: '::1' }, smc: true },
  { name: 'exclude 127.0.0.1, autoSelectFamily with localPort', rules: ['--exclude', '127.0.0.1/32'], listen: '127.0.0.1', connect: { ...HE, localPort: 'free' }, smc: false, swapped: true },
  { name: 'include [::1], autoSelectFamily with localPort to 127.0.0.1', rules: ['--include', '[::1]/128'], listen: '127.0.0.1', connect: { ...HE, localPort: 'free' }, smc: false, swapped: true },
  { name: 'include 127.0.0.1, autoSelectFamily with localPort', rules: ['--include', '127.0.0.1/32'], listen: '127.0.0.1', connect: { ...HE, localPort: 'free' }, smc: true },
];

describe.skipIf(EXPECT_MODE !== undefined)('the destination decides for every client socket (test mode)', () => {
  for (const c of CASES) {
    it(`${c.name}: ${c.smc ? 'SMC' : 'plain TCP'}`, async () => {
      const { run, results } = await runScenario('policy.cjs', [JSON.stringify({ listen: c.listen, connect: c.connect })], { SMC_RUN_DEBUG: '1' }, c.rules);
      expect(results, run.stdout + run.stderr).toHaveLength(1);
      const r = results[0] as ScenarioResult & { seen: Seen };
      expect(r.ok, r.error ?? run.stderr).toBe(true);
      expect(r.seen.isSmc, run.stderr).toBe(c.smc);
      // the bind the program asked for is kept, and TCP_NODELAY set before connect survives
      if (typeof c.connect.localAddress === 'string' && !/^(0\.0\.0\.0|::)$/.test(c.connect.localAddress)) {
        expect(r.seen.localAddress).toBe(c.connect.localAddress);
      }
      if (c.connect.localPort !== undefined) expect(r.seen.localPort).toBe(r.seen.requestedLocalPort);
      expect(r.seen.noDelay).toBe(true);
      // a client socket swapped at connect keeps its fd number: the fd that connected is the one swapped
      // (and, for a socket made as SMC at bind, the one the hook's bind line named)
      const swap = /: connect6? \S+ (excluded|wanted) by policy at connect: .*fd (\d+), bound as before$/m.exec(run.stderr);
      const bindFds = [...run.stderr.matchAll(/: bind6? \S+ on .* fd (\d+)$/gm)].map((m) => Number(m[1]));
      if (swap) expect(Number(swap[2])).toBe(r.seen.fd);
      if (swap?.[1] === 'excluded') expect(bindFds).toContain(r.seen.fd);
      // the cases where the decision at bind was wrong for the destination
      if (c.swapped) expect(swap, run.stderr).not.toBeNull();
      expect(r.hook?.errors).toBe(0);
    });
  }
});
