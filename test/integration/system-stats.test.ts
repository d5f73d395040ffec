// The CLI contract of stats system | devices | linkgroups | info on this host: without SMC one line
// and exit 1 (ENOSMC); with SMC exit 0 and JSON; usage errors exit 2, a bad snapshot is reported before
// the kernel is asked.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HOST_HAS_SMC } from '../helpers/host-smc';
import { EXPECT_MODE, smcRun } from '../helpers/run';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-stats-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe.runIf(!EXPECT_MODE)('stats system | devices | linkgroups | info (host)', () => {
  if (HOST_HAS_SMC) {
    describe('with SMC in the kernel', () => {
      for (const sub of ['system', 'devices', 'linkgroups', 'info']) {
        it(`stats ${sub}: exit 0, a table, and the same as JSON`, async () => {
          const r = await smcRun(['stats', sub]);
          expect(r.code, r.stderr).toBe(0);
          expect(r.stderr).toBe('');
          expect(r.stdout).not.toBe('');
          const j = await smcRun(['stats', sub, '--json']);
          expect(j.code, j.stderr).toBe(0);
          expect(JSON.parse(j.stdout)).not.toHaveProperty('error');
        });
      }

      it('--save writes a snapshot that --since reads back', async () => {
        const file = path.join(tmp, 'host.snap');
        expect((await smcRun(['stats', 'system', '--save', file])).code).toBe(0);
        expect(fs.statSync(file).size).toBeGreaterThan(0);
        const since = await smcRun(['stats', 'system', '--since', file, '--json']);
        expect(since.code, since.stderr).toBe(0);
        expect(JSON.parse(since.stdout)).not.toHaveProperty('error');
      });
    });
  } else describe('without SMC in the kernel', () => {
    for (const sub of ['system', 'devices', 'linkgroups', 'info']) {
      it(`stats ${sub}: one line, exit 1, ENOSMC in --json`, async () => {
        const r = await smcRun(['stats', sub]);
        expect(r.code).toBe(1);
        expect(r.stdout).toBe('');
        expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
        expect(r.stderr).toMatch(/^smc-run: no SMC in this kernel/);
        const j = await smcRun(['stats', sub, '--json']);
        expect(j.code).toBe(1);
        expect(JSON.parse(j.stdout)).toMatchObject({ error: { code: 'ENOSMC' } });
      });
    }

    it('--save writes nothing when there are no counters', async () => {
      const file = path.join(tmp, 'never.snap');
      expect((await smcRun(['stats', 'system', '--save', file])).code).toBe(1);
      expect(fs.existsSync(file)).toBe(false);
    });
  });

  it('--target with --netns is a usage error (exit 2)', async () => {
    const r = await smcRun(['stats', 'system', '--target', '1', '--netns', 'x', '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'EUSAGE' } });
  });

  it('--netns of a namespace that does not exist: ENOENT, exit 1', async () => {
    const r = await smcRun(['stats', 'devices', '--netns', 'smc-run-no-such-ns', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'ENOENT' } });
  });

  it('--since a missing or foreign file: said in one line before the kernel is asked', async () => {
    const missing = await smcRun(['stats', 'system', '--since', path.join(tmp, 'missing.snap')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^smc-run: cannot read the snapshot .*missing\.snap: no such file \(write one with --save\)\n$/);
    const junk = path.join(tmp, 'junk.snap');
    fs.writeFileSync(junk, '{"hello": 1}');
    const bad = await smcRun(['stats', 'system', '--since', junk, '--json']);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ error: { code: 'EINVAL', message: expect.stringMatching(/is not a snapshot/) } });
  });

  it('--save needs a file name', async () => {
    const r = await smcRun(['stats', 'system', '--save']);
    expect(r.code).toBe(2);
  });
});
