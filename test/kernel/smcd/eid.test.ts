// UEID table round trip and the SEID command on a real kernel (x86: no system EID).
import { afterAll, describe, expect, it } from 'vitest';
import { EXPECT_MODE, smcRun } from '../../helpers/run';

const ueids = async (): Promise<string[]> => (JSON.parse((await smcRun(['ueid', 'list', '--json'])).stdout) as { ueids: string[] }).ueids;

describe.runIf(EXPECT_MODE === 'smcd')('UEID and SEID', () => {
  afterAll(async () => {
    await smcRun(['ueid', 'del', 'smc-run-extra']);
  });

  it('add, list, del round trip (IDs upper-cased as the kernel stores them)', async () => {
    expect((await smcRun(['ueid', 'add', 'smc-run-extra'])).code).toBe(0);
    expect(await ueids()).toEqual(expect.arrayContaining(['SMC-RUN-TEST', 'SMC-RUN-EXTRA']));
    expect((await smcRun(['ueid', 'del', 'smc-run-extra'])).code).toBe(0);
    expect(await ueids()).toEqual(['SMC-RUN-TEST']);
    const again = await smcRun(['ueid', 'del', 'smc-run-extra']);
    expect(again.code).toBe(1);
    expect(again.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('refuses a namespace (the table is OS-wide) and bad IDs, changing nothing', async () => {
    const ns = await smcRun(['ueid', 'add', 'X', '--netns', 'foo']);
    expect(ns.code).toBe(2);
    expect(ns.stderr).toMatch(/global to the OS/);
    const bad = await smcRun(['ueid', 'add', 'no spaces']);
    expect(bad.code).toBe(2);
    expect(await ueids()).toEqual(['SMC-RUN-TEST']);
  });

  it('seid: none off s390, and enabling says why not', async () => {
    const show = await smcRun(['seid', 'show']);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/no system EID/);
    const en = await smcRun(['seid', 'enable']);
    expect(en.code).toBe(1);
    expect(en.stderr.trim()).toMatch(/s390 only/);
  });
});
