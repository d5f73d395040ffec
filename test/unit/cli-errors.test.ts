// One error vocabulary: every library error reaches the CLI through toCliError with a code from the
// table and that code's exit status.
import { describe, expect, it } from 'vitest';
import { NoSmcError } from '../../src/api/errors';
import { CliError, ERROR_CODES, toCliError } from '../../src/cli/errors';
import { ConfigError } from '../../src/config';
import { NetlinkError } from '../../src/netlink/socket';
import { TargetError } from '../../src/netns';
import { SnapshotError } from '../../src/cli/snapshot';
import { SysctlError } from '../../src/sysctl';

const errno = (code: string, message: string): Error => Object.assign(new Error(message), { code, syscall: 'open' });

describe('toCliError', () => {
  it('maps each library error to a code and the exit status of the table', () => {
    const cases: [unknown, string, number][] = [
      [new TargetError('EUSAGE', 'give --target or --netns'), 'EUSAGE', 2],
      [new TargetError('ESRCH', 'no process 9'), 'ESRCH', 1],
      [new TargetError('EINVAL', '/tmp/x is not a network namespace'), 'EINVAL', 1],
      [new SysctlError('ENOSYSCTL', 'no such sysctl'), 'ENOSYSCTL', 2],
      [new SysctlError('EINVAL', 'refused by the kernel', true), 'EINVAL', 1],
      [new SysctlError('EPERM', 'writing needs CAP_NET_ADMIN'), 'EPERM', 1],
      [new SnapshotError('ESNAPSHOT', 'not a snapshot'), 'ESNAPSHOT', 1],
      [new NoSmcError('no SMC'), 'ENOSMC', 1],
      [new ConfigError('SMC_RUN_INCLUDE: bad'), 'EINVALCONFIG', 2],
      [new NetlinkError(2, 'ENOENT', 'SMC_GEN_NETLINK not found'), 'ENOSMC', 1],
      [new NetlinkError(93, 'EPROTONOSUPPORT', 'sock_diag'), 'ENOSMC', 1],
      [new NetlinkError(1, 'EPERM', 'SMC_NETLINK_ADD_UEID'), 'EPERM', 1],
      [errno('EACCES', 'open /proc/sys/net/smc/x'), 'EACCES', 1],
      [errno('EAGAIN', 'pthread_create failed'), 'EAGAIN', 1],
      [new RangeError('"x" is not a size'), 'EINVAL', 2],
      [new Error('boom'), 'EINTERNAL', 1],
    ];
    for (const [e, code, exit] of cases) {
      const c = toCliError(e);
      expect([c.code, c.exitCode], String(e)).toEqual([code, exit]);
    }
  });

  it('says how to get permission once, in one wording', () => {
    expect(toCliError(errno('EPERM', 'setns')).message).toBe('setns: not permitted (run as root, e.g. with sudo)');
    expect(toCliError(new NetlinkError(1, 'EPERM', 'SMC_NETLINK_ADD_UEID')).message).toBe('SMC_NETLINK_ADD_UEID: changing this needs CAP_NET_ADMIN');
    // a message that names the capability already gets nothing appended
    expect(toCliError(new SysctlError('EPERM', 'writing x needs CAP_NET_ADMIN (run as root, e.g. with sudo)')).message).toBe('writing x needs CAP_NET_ADMIN (run as root, e.g. with sudo)');
  });

  it('takes the exit status from the table unless a caller gives one', () => {
    for (const [code, { exit }] of Object.entries(ERROR_CODES)) expect(new CliError(code, 'x').exitCode).toBe(exit);
    expect(new CliError('EUNLISTED', 'x').exitCode).toBe(1);
    expect(new CliError('EINVAL', 'x', 1).exitCode).toBe(1);
  });
});
