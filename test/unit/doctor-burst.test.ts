// doctor's connection-burst advice (#23), from the facts alone.
import { describe, expect, it } from 'vitest';
import { burstChecks } from '../../src/doctor/burst';

describe('doctor burst advice', () => {
  it('limit_smc_hs=0 names the cure; 1 is fine', () => {
    const off = burstChecks({ limitSmcHs: 0, somaxconn: 4096, handshakeErrors: { client: 0, server: 0 } });
    expect(off.find((c) => c.id === 'burst.limit_smc_hs')).toMatchObject({ status: 'info', fix: expect.stringMatching(/limit_smc_hs=1/) });
    expect(off.find((c) => c.id === 'burst.handshake_errors')).toBeUndefined();
    const on = burstChecks({ limitSmcHs: 1, somaxconn: 4096, handshakeErrors: { client: 0, server: 0 } });
    expect(on.find((c) => c.id === 'burst.limit_smc_hs')?.status).toBe('ok');
  });
  it('handshake errors so far are reported with the counts and the retry', () => {
    const c = burstChecks({ limitSmcHs: 0, somaxconn: 4096, handshakeErrors: { client: 288, server: 0 } }).find((x) => x.id === 'burst.handshake_errors');
    expect(c?.message).toMatch(/^288 client and 0 server SMC handshakes failed/);
    expect(c?.message).toMatch(/retries them over TCP/);
    expect(c?.fix).toMatch(/limit_smc_hs=1/);
  });
  it('the backlog cap is shown; unreadable facts give no check', () => {
    expect(burstChecks({ limitSmcHs: undefined, somaxconn: 128, handshakeErrors: undefined })).toEqual([
      expect.objectContaining({ id: 'burst.somaxconn', message: expect.stringMatching(/^net.core.somaxconn 128 caps every listen backlog/) }),
    ]);
  });
});
