// IPPROTO_SMC sockets (socket(AF_INET, SOCK_STREAM, IPPROTO_SMC), 6.11+) in sock_diag, on 6.12 and the
// newest kernel: the kernel's rows lack their addresses, smc-run's answers (getSmcInfo, the listing that
// `stats sockets` and the exporter use) carry them. AF_SMC rows carry the kernel's own addresses.
import { describe, expect, it } from 'vitest';
import { EXPECT_MODE, runScenario } from '../../helpers/run';

// each smc-run start takes seconds under TCG
const SLOW = 600_000;

describe.runIf(EXPECT_MODE === 'smcd')('IPPROTO_SMC sockets in sock_diag', () => {
  it('smc_diag gives IPPROTO_SMC sockets right ports and zeroed addresses; getSmcInfo and the listing fill them in', async () => {
    // smc_diag_msg_common_fill() copies addresses only for sk_protocol SMCPROTO_SMC / SMCPROTO_SMC6 (AF_SMC
    // sockets); an IPPROTO_SMC socket has sk_protocol IPPROTO_SMC (256), so only ports and family come back.
    // The connecting socket has family AF_INET (inet_create); one accepted from an IPPROTO_SMC listener is
    // allocated as PF_SMC (smc_sock_alloc) and reports 43, like an AF_SMC socket
    interface Raw { side: string; family: number; mode: string; sport: number; dport: number; src: string; dst: string }
    type Ends = { local: { address: string; port: number }; remote: { address: string; port: number } };
    interface Out { raw: Raw[]; node: Record<'client' | 'server', { local: string; remote: string }>; info: Record<'client' | 'server', Ends>; listed: (Ends & { side: string; family: string })[]; listedAsync: unknown[] }
    const zero = '0'.repeat(32);
    const lo = `7f000001${'0'.repeat(24)}`;
    const port = (hostPort: string): number => Number(hostPort.split(':').at(-1));
    const check = async (proto: string): Promise<Out> => {
      const { run: r, results } = await runScenario('ipproto-diag.cjs', [], {}, ['--proto', proto]);
      const out = results[0] as unknown as Out & { ok: boolean };
      expect(out?.ok, r.stdout + r.stderr).toBe(true);
      console.log(`${proto}: ${JSON.stringify(out.raw)}`);
      expect(out.raw.map((x) => [x.side, x.mode])).toEqual([['client', 'smcd'], ['server', 'smcd']]);
      const [client, server] = out.raw as [Raw, Raw];
      expect([client.sport, client.dport]).toEqual([port(out.node.client.local), port(out.node.client.remote)]);
      expect([server.sport, server.dport]).toEqual([port(out.node.server.local), port(out.node.server.remote)]);
      return out;
    };
    const ipproto = await check('ipproto');
    expect(ipproto.raw.map((x) => [x.side, x.family, x.src, x.dst])).toEqual([['client', 2, zero, zero], ['server', 43, zero, zero]]);
    // getSmcInfo fills them from the socket itself; a namespace listing (no socket at hand) from the TCP
    // socket below each (inet_diag, same ports)
    for (const side of ['client', 'server'] as const) {
      const i = ipproto.info[side];
      expect(`${i.local.address}:${i.local.port}`, side).toBe(ipproto.node[side].local);
      expect(`${i.remote.address}:${i.remote.port}`, side).toBe(ipproto.node[side].remote);
      const l = ipproto.listed.find((x) => x.side === side);
      expect(l, side).toBeDefined();
      expect(`${l?.local.address}:${l?.local.port}`, `listed ${side}`).toBe(ipproto.node[side].local);
      expect(`${l?.remote.address}:${l?.remote.port}`, `listed ${side}`).toBe(ipproto.node[side].remote);
      expect(l).toMatchObject({ family: 'IPv4' });
    }
    expect(ipproto.listedAsync).toEqual(ipproto.listed);
    console.log(`listing of IPPROTO_SMC sockets: ${JSON.stringify(ipproto.listed)}`);
    const afSmc = await check('af_smc');
    for (const x of afSmc.raw) expect(x, 'AF_SMC row').toMatchObject({ family: 43, src: lo, dst: lo });
  }, SLOW);

});
