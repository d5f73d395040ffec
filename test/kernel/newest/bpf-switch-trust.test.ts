// The BPF switch's state is trusted only where nobody else could have written it, and a failed enable
// changes nothing (lane smcd-newest: bpffs, BTF and smc_hs_ctrl).
// - /sys/fs/bpf/smc-run made by another user (bpffs mounted without mode=, 1777), or a symlink there:
//   enable and status refuse it in one line, exit 1, and status never reports it as loaded.
// - A re-enable whose switch step fails (SMC_RUN_TEST_ENABLE_FAULT=switch, test only) puts the namespace's
//   previous policy back; an enable without rules clears the policy only once the switch is in place.
import * as fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerNet, type ContainerNet } from '../../helpers/container';
import { EXPECT_MODE, run, smcRun } from '../../helpers/run';

const SLOW = 600_000;
const DIR = '/sys/fs/bpf/smc-run';

interface Status { loaded: boolean; namespaces: { inode: number; policy?: { include: unknown[]; exclude: { port?: number }[] } }[] }
async function status(): Promise<Status> {
  const r = await smcRun(['status', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Status;
}

describe.runIf(EXPECT_MODE === 'smcd')('the BPF switch trusts only its own state, and a failed enable changes nothing', () => {
  let net: ContainerNet;
  let inode = 0;

  beforeAll(async () => {
    await smcRun(['disable', '--all']);
    const m = await run('sh', ['-c', 'mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf']);
    expect(m.code, m.stderr).toBe(0);
    net = await containerNet(`smcrun-trust-${process.pid}`, '10.77.43');
    inode = fs.statSync(net.path).ino;
  }, SLOW);

  afterAll(async () => {
    fs.rmSync(DIR, { recursive: true, force: true });
    await smcRun(['disable', '--all']);
    await net?.remove();
  }, SLOW);

  it('a pin directory another user made first: enable and status refuse it in one line, nothing is loaded', async () => {
    fs.mkdirSync(DIR);
    fs.chownSync(DIR, 65534, 65534);
    fs.chmodSync(DIR, 0o777);
    for (const args of [['enable', '--netns', net.name], ['status']]) {
      const r = await smcRun(args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toEqual([expect.stringMatching(/^smc-run: \/sys\/fs\/bpf\/smc-run belongs to uid 65534 with mode 777, not to this user alone: .*remove it/)]);
    }
    expect(fs.readdirSync(DIR)).toEqual([]);
    fs.rmdirSync(DIR);
  }, SLOW);

  it('a symlink in its place: refused, never reported as loaded', async () => {
    fs.symlinkSync('/tmp', DIR);
    const r = await smcRun(['status', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'EPERM', message: expect.stringMatching(/is not a directory/) } });
    fs.unlinkSync(DIR);
  }, SLOW);

  it('a re-enable that fails after its policy step puts the previous policy back; enable without rules keeps it until the switch is in place', async () => {
    expect((await smcRun(['enable', '--netns', net.name, '--exclude', '*:1111'])).code).toBe(0);
    const policyOf = async () => (await status()).namespaces.find((n) => n.inode === inode)?.policy;
    expect(await policyOf()).toMatchObject({ exclude: [{ port: 1111 }] });
    const fault = { SMC_RUN_TEST_ENABLE_FAULT: 'switch' };
    const again = await smcRun(['enable', '--netns', net.name, '--exclude', '*:2222'], fault);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/the switch could not be put in place/);
    expect(await policyOf()).toMatchObject({ include: [], exclude: [{ port: 1111 }] });
    const whole = await smcRun(['enable', '--netns', net.name], fault);
    expect(whole.code).toBe(1);
    expect(await policyOf()).toMatchObject({ exclude: [{ port: 1111 }] });
    // and without the fault, enable without rules does clear it
    expect((await smcRun(['enable', '--netns', net.name])).code).toBe(0);
    expect(await policyOf()).toBeUndefined();
    expect((await status()).loaded).toBe(true);
  }, SLOW);
});

describe.runIf(EXPECT_MODE === 'smcd')('a full switch map: namespaces that ended make room, live ones are the limit', () => {
  const nets: ContainerNet[] = [];
  afterAll(async () => {
    await smcRun(['disable', '--all']);
    for (const n of nets) await n.remove();
  }, SLOW);

  it('with room for 3: the 4th namespace fits once one of the first 3 ended; a 5th is refused in one line (ENOSPC)', async () => {
    await smcRun(['disable', '--all']);
    const small = { SMC_RUN_TEST_SWITCH_MAP_MAX: '3' };
    for (let i = 0; i < 5; i++) nets.push(await containerNet(`smcrun-full${i}-${process.pid}`, `10.77.${50 + i}`));
    for (const n of nets.slice(0, 3)) expect((await smcRun(['enable', '--netns', n.name], small)).code).toBe(0);
    // one of them ends (no process, no name): its entry stays until the map is full
    const ended = nets.shift()!;
    await ended.remove();
    expect((await smcRun(['enable', '--netns', nets[2]!.name])).code).toBe(0);
    const st = JSON.parse((await smcRun(['status', '--json'])).stdout) as Status;
    expect(st.namespaces).toHaveLength(3);
    const full = await smcRun(['enable', '--netns', nets[3]!.name, '--json']);
    expect(full.code).toBe(1);
    expect(JSON.parse(full.stdout)).toMatchObject({ error: { code: 'ENOSPC', message: expect.stringMatching(/holds 3 namespaces, its most/) } });
  }, SLOW);
});
