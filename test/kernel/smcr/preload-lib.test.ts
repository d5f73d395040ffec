// The LD_PRELOAD library over SMC-R between the two guests: redis-server under smc-run in guest b (the
// library), a Node ioredis client under smc-run in guest a (the Node shim); each end read through its own
// guest's sock_diag (`smc-run stats sockets --json`) while the connection is open, the data checked end
// to end. Debian's redis-server from the host's root (the lane script installs it on the host).
import { describe, expect, it } from 'vitest';
import { EXPECT_MODE, smcRun } from '../../helpers/run';
import { PEER_IP, peer } from '../../helpers/peer';
import { ends } from '../../helpers/preload-lib';

interface Row { mode: string; local: { address: string; port: number }; remote: { address: string; port: number }; owners?: { command: string }[] }

const rowsOf = (stdout: string): Row[] => (JSON.parse(stdout) as { sockets: Row[] }).sockets;

describe.runIf(EXPECT_MODE === 'smcr')('LD_PRELOAD library over SMC-R', () => {
  it('redis-server under smc-run in one guest, a Node ioredis client under smc-run in the other: SMC-R both ends, a 256 KiB value and a 1,000-pair pipeline intact and in order', async () => {
    const port = 6390;
    const started = await peer<{ error?: string }>({
      op: 'exec', name: 'redis', ready: 'Ready to accept connections',
      argv: ['redis-server', '--port', String(port), '--bind', '0.0.0.0', '--protected-mode', 'no', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    });
    expect(started.error).toBeUndefined();
    try {
      const client = smcRun(['node', 'test/scenarios/redis-client.cjs', PEER_IP, String(port), '4000']);
      // this end (sock_diag, polled until the client's connection is SMC-R); then the server's end in guest b
      const mine = (await ends(port, (_s, c) => c.some((x) => x.mode === 'smcr'))).client;
      const b = await peer<{ code: number; stdout: string; stderr: string }>({ op: 'run', argv: ['node', 'bin/smc-run', 'stats', 'sockets', '--json'] });
      expect(b.code, b.stderr).toBe(0);
      const theirs = rowsOf(b.stdout).filter((r) => r.local.port === port);
      const r = await client;
      console.log(`ioredis over SMC-R: ${r.stdout.trim()}; client ${mine.map((x) => x.mode)}, server ${theirs.map((x) => `${x.mode}/${(x.owners ?? []).map((o) => o.command)}`)}`);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}')).toMatchObject({ ok: true, value: { bytes: 256 << 10, intact: true }, pipeline: { commands: 2000, inOrder: true }, client: { mode: 'smcr' } });
      expect(mine.map((x) => x.mode)).toEqual(['smcr']);
      expect(theirs.map((x) => x.mode)).toEqual(['smcr']);
      expect(theirs[0]?.owners?.map((o) => o.command).join(',')).toMatch(/redis-server/);
    } finally {
      await peer({ op: 'stop', name: 'redis' });
    }
  });
});
