// SMC-R needs a UEID on both hosts in the pair (SMC-Rv2; without a PNET ID there is no SMC-Rv1 device
// either). With the UEID removed on this host the client finds no SMC device and falls back; put back,
// SMC-R returns. State-changing: the UEID is restored in afterAll whatever happens.
import { afterAll, describe, expect, it } from 'vitest';
import { EXPECT_MODE, smcRun } from '../../helpers/run';
import { echoClient } from '../../helpers/echo';
import { PEER_IP, peerConns, startPeerServer } from '../../helpers/peer';

const UEID = 'SMC-RUN-TEST';

describe.runIf(EXPECT_MODE === 'smcr')('SMC-R without a UEID', () => {
  afterAll(async () => {
    await smcRun(['ueid', 'add', UEID]);
  });

  it('no UEID on the client host: the client falls back for want of an SMC device; re-added, SMC-R again', async () => {
    const port = await startPeerServer('no-ueid', ['server', '0.0.0.0']);
    const del = await smcRun(['ueid', 'del', UEID]);
    expect(del.code, del.stderr).toBe(0);
    const c = await echoClient(PEER_IP, port, 65536);
    expect(c.result?.ok, c.run.stderr).toBe(true);
    const [server] = await peerConns('no-ueid', 1);
    console.log(`SMC-R, no UEID on the client: client ${c.result?.client?.fallback}/${c.result?.client?.peer}, server ${server?.fallback}/${server?.peer}`);
    expect(c.result?.client).toMatchObject({ mode: 'fallback', fallback: 'NOSMCDEV' });
    expect(server).toMatchObject({ side: 'server', mode: 'fallback' });

    const add = await smcRun(['ueid', 'add', UEID]);
    expect(add.code, add.stderr).toBe(0);
    const again = await echoClient(PEER_IP, port, 65536);
    expect(again.result?.ok, again.run.stderr).toBe(true);
    expect(again.result?.client).toMatchObject({ mode: 'smcr', fallback: null });
    const conns = await peerConns('no-ueid', 2);
    expect(conns[1]).toMatchObject({ side: 'server', mode: 'smcr', fallback: null });
  });
});
