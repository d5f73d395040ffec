// --proto on 6.1 (smcr-6.1 lane): `auto` (the default) makes AF_SMC sockets, which negotiate SMC and fall
// back with NOSMCDEV over SoftRoCE on 6.1 (see connections.test.ts); `ipproto` cannot work before 6.11 (no
// IPPROTO_SMC): exactly one notice line saying that, and plain TCP, which the SMC server sees as PEERNOSMC.
import * as os from 'node:os';
import { describe, expect, it } from 'vitest';
import { EXPECT_MODE } from '../../helpers/run';
import { echoClient } from '../../helpers/echo';
import { PEER_IP, peerConns, startPeerServer } from '../../helpers/peer';

if (EXPECT_MODE !== 'smcr' || !os.release().startsWith('6.1.')) throw new Error(`the 6.1 suite runs in the smcr-6.1 guest (kernel ${os.release()}, SMC_RUN_EXPECT=${EXPECT_MODE})`);

describe('--proto on 6.1', () => {
  it('--proto auto: AF_SMC sockets, the SMC handshake runs (NOSMCDEV fallback on both ends)', async () => {
    const port = await startPeerServer('proto-auto', ['server', '0.0.0.0']);
    const c = await echoClient(PEER_IP, port, 64 << 10, { launcherArgs: ['--proto', 'auto', '--debug'] });
    expect(c.result?.ok, c.run.stderr).toBe(true);
    expect(c.result?.client).toMatchObject({ mode: 'fallback', fallback: 'NOSMCDEV' });
    expect(c.run.stderr).toMatch(new RegExp(`connect4? ${PEER_IP.replace(/\./g, '\\.')}:${port} on af_smc fd \\d+`));
    expect(c.run.stderr).not.toMatch(/ipproto_smc|WARN/);
    const [server] = await peerConns('proto-auto', 1);
    expect(server).toMatchObject({ mode: 'fallback', fallback: 'PEERDECL', peer: 'NOSMCDEV' });
  });

  it('--proto ipproto: one notice line (no IPPROTO_SMC before 6.11; AF_SMC is there) and plain TCP', async () => {
    const port = await startPeerServer('proto-ipproto', ['server', '0.0.0.0']);
    const c = await echoClient(PEER_IP, port, 64 << 10, { launcherArgs: ['--proto', 'ipproto'] });
    expect(c.result?.ok, c.run.stderr).toBe(true);
    expect(c.result?.client).toMatchObject({ mode: 'tcp', fallback: null });
    const lines = c.run.stderr.trim().split('\n');
    expect(lines, c.run.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^WARN: smc-run\[\d+\]: --proto ipproto: this kernel \(6\.1\.[^)]*\) has no IPPROTO_SMC sockets \(IPv4: EPROTONOSUPPORT, IPv6: EPROTONOSUPPORT; they need Linux 6\.11\+\): running on plain TCP; without --proto ipproto smc-run uses AF_SMC, which this kernel has$/);
    // the SMC server on b sees a plain TCP peer
    const [server] = await peerConns('proto-ipproto', 1);
    expect(server).toMatchObject({ mode: 'fallback', fallback: 'PEERNOSMC' });
  });
});
