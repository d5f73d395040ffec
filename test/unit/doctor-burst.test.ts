// doctor's connection-burst advice (#23), from the facts alone.
import { describe, expect, it } from 'vitest';
import { burstChecks } from '../../src/doctor/burst';

describe('doctor burst advice', () => {
  it('names the listen backlog as the cure, and somaxconn when it caps it', () => {
    const c = burstChecks({ limitSmcHs: 0, somaxconn: 4096, handshakeErrors: { client: 0, server: 0 } });
    expect(c.find((x) => x.id === 'burst.backlog')).toMatchObject({ status: 'info', message: expect.stringMatching(/somaxconn 4096 caps it/), fix: expect.stringMatching(/listen\(port, host, 4096\)/) });
    expect(c.find((x) => x.id === 'burst.backlog')?.fix).not.toMatch(/sysctl -w net.core.somaxconn/);
    const low = burstChecks({ limitSmcHs: 0, somaxconn: 128, handshakeErrors: undefined });
    expect(low.find((x) => x.id === 'burst.backlog')?.fix).toMatch(/sysctl -w net.core.somaxconn=4096$/);
  });
  it('limit_smc_hs=0 says what 1 does and does not do; 1 is fine', () => {
    const off = burstChecks({ limitSmcHs: 0, somaxconn: 4096, handshakeErrors: { client: 0, server: 0 } });
    expect(off.find((c) => c.id === 'burst.limit_smc_hs')).toMatchObject({ status: 'info', message: expect.stringMatching(/does not lift the backlog limit/), fix: expect.stringMatching(/limit_smc_hs=1/) });
    expect(off.find((c) => c.id === 'burst.handshake_errors')).toBeUndefined();
    const on = burstChecks({ limitSmcHs: 1, somaxconn: 4096, handshakeErrors: { client: 0, server: 0 } });
    expect(on.find((c) => c.id === 'burst.limit_smc_hs')?.status).toBe('ok');
  });
  it('handshake errors so far are reported with the counts and the retry', () => {
    const c = burstChecks({ limitSmcHs: 0, somaxconn: 4096, handshakeErrors: { client: 288, server: 0 } }).find((x) => x.id === 'burst.handshake_errors');
    expect(c?.status).toBe('info');
    expect(c?.message).toMatch(/^288 client and 0 server SMC handshakes failed/);
    expect(c?.message).toMatch(/retries them over TCP/);
    expect(c?.fix).toMatch(/backlog/);
  });
  it('unreadable facts give no check', () => {
    expect(burstChecks({ limitSmcHs: undefined, somaxconn: undefined, handshakeErrors: undefined })).toEqual([]);
  });
});
