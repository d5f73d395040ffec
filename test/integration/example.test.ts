// examples/echo-smc.js (what `npm run example` runs) under the launcher must name the transport each end
// and the echo really used: on this host the launcher's test mode makes the hook adopt plain inet sockets,
// so both ends and the echo are TCP; inside the SMC-D guest (SMC_RUN_EXPECT=smcd) all three are SMC-D.
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXPECT_MODE, REPO, modeEnv, smcRun } from '../helpers/run';

const NAME = { smcd: 'SMC-D', smcr: 'SMC-R' } as const;

describe('npm run example (examples/echo-smc.js)', () => {
  it('says which transport each end and the echo used', async () => {
    const r = await smcRun(['node', path.join(REPO, 'examples', 'echo-smc.js')], modeEnv());
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    if (EXPECT_MODE) {
      expect(lines.sort()).toEqual([`client: ${NAME[EXPECT_MODE]}`, `echo over ${NAME[EXPECT_MODE]}: hello`, `server: ${NAME[EXPECT_MODE]}`]);
    } else {
      expect(lines.sort()).toEqual(['client: TCP (not an SMC socket)', 'echo over TCP: hello', 'server: TCP (not an SMC socket)']);
    }
  });
});
