// --unit and --cgroup resolution for the BPF switch's cgroup scope, on a tree shaped like systemd's.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CgroupError, cgroupPath, unitCgroup, unitName, unitOfCgroup } from '../../src/bpf/cgroup';

describe('cgroup scope: which directory --unit and --cgroup name', () => {
  let root = '';
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-cgroup-'));
    for (const d of ['system.slice/redis.service', 'system.slice/nginx.service', 'user.slice/user-1000.slice/user@1000.service/app.slice/dev.service', 'a/twice.service', 'b/twice.service']) {
      fs.mkdirSync(path.join(root, d), { recursive: true });
    }
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('unit names as systemd spells them; a bare name means NAME.service', () => {
    expect(unitName('redis')).toBe('redis.service');
    expect(unitName('redis.service')).toBe('redis.service');
    expect(unitName('session-4.scope')).toBe('session-4.scope');
    expect(() => unitName('../etc')).toThrow(CgroupError);
    expect(() => unitName('a b')).toThrow(/not a systemd unit name/);
  });

  it('a system service two levels down, a user service deeper', () => {
    expect(unitCgroup('redis', root)).toBe(path.join(root, 'system.slice', 'redis.service'));
    expect(unitCgroup('dev.service', root)).toBe(path.join(root, 'user.slice/user-1000.slice/user@1000.service/app.slice/dev.service'));
  });

  it('no such unit: ENOENT (exit 1); two cgroups of that name: a usage error naming both', () => {
    expect(() => unitCgroup('absent', root)).toThrow(expect.objectContaining({ code: 'ENOENT', isUsage: false }));
    expect(() => unitCgroup('twice', root)).toThrow(expect.objectContaining({ code: 'EUSAGE', isUsage: true, message: expect.stringContaining('several cgroups') }));
  });

  it('--cgroup: absolute or under the root; it must be a directory there', () => {
    expect(cgroupPath('system.slice/redis.service', root)).toBe(path.join(root, 'system.slice/redis.service'));
    expect(cgroupPath(path.join(root, 'a'), root)).toBe(path.join(root, 'a'));
    expect(() => cgroupPath('nope', root)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

  it('status names the unit of a cgroup directory by its name, and nothing for other directories', () => {
    expect(unitOfCgroup('/sys/fs/cgroup/system.slice/redis.service')).toBe('redis.service');
    expect(unitOfCgroup('/sys/fs/cgroup/user.slice/user-1000.slice/session-4.scope')).toBe('session-4.scope');
    expect(unitOfCgroup('/sys/fs/cgroup/system.slice')).toBeUndefined();
    expect(unitOfCgroup('/sys/fs/cgroup/smcrun-cg-1')).toBeUndefined();
    expect(unitOfCgroup(undefined)).toBeUndefined();
  });
});
