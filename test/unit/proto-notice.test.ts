// --proto ipproto on a kernel with AF_SMC but without IPPROTO_SMC (before 6.11, e.g. Debian 12's 6.1):
// the notice names the missing socket type and the kernel, not "no SMC" (checked for real in the
// smcr-6.1 lane, test/kernel/k61/proto.test.ts).
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config';
import { AF_SMC } from '../../src/constants';
import type { NativeAddon } from '../../src/native';
import { ipprotoUnsupported } from '../../src/hook/proto-notice';

/** An addon whose socket() works only for the given domains. */
const addonWith = (domains: number[]) =>
  ({
    createSocket: (domain: number) => {
      if (domains.includes(domain)) return 99;
      throw Object.assign(new Error('socket failed: EAFNOSUPPORT'), { code: 'EAFNOSUPPORT', errno: -97, syscall: 'socket' });
    },
    closeFd: () => undefined,
  }) as unknown as NativeAddon;

const reasons = ['IPv4: EPROTONOSUPPORT', 'IPv6: EPROTONOSUPPORT'];

describe('--proto ipproto without IPPROTO_SMC', () => {
  it('says the kernel lacks IPPROTO_SMC (6.11+) and that AF_SMC works', () => {
    const r = ipprotoUnsupported(addonWith([AF_SMC]), { ...readConfig({}), proto: 'ipproto' }, reasons);
    expect(r?.reason).toMatch(/^--proto ipproto: this kernel \(.+\) has no IPPROTO_SMC sockets \(IPv4: EPROTONOSUPPORT, IPv6: EPROTONOSUPPORT; they need Linux 6\.11\+\)$/);
    expect(r?.notice).toBe(`${r?.reason}: running on plain TCP; without --proto ipproto smc-run uses AF_SMC, which this kernel has`);
  });

  it('leaves the generic "no SMC" to the caller when AF_SMC fails too, or the mode is not ipproto', () => {
    expect(ipprotoUnsupported(addonWith([]), { ...readConfig({}), proto: 'ipproto' }, reasons)).toBeUndefined();
    expect(ipprotoUnsupported(addonWith([AF_SMC]), { ...readConfig({}), proto: 'auto' }, reasons)).toBeUndefined();
    expect(ipprotoUnsupported(addonWith([AF_SMC]), { ...readConfig({}), proto: 'ipproto', socketFamily: 'inet' }, reasons)).toBeUndefined();
  });
});
