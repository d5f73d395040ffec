'use strict';
// node bench/soak.cjs [N] — N (default 100,000) sequential connect + 1 B echo + close through the hook
// in test mode (the addon makes plain inet sockets), in one process: open fds, RSS and heap (after a full
// GC) every N/10 connections. The hook must hold nothing per connection: no fd and no memory growth.
// Writes bench/results/soak-host.json (not with --smoke).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const smoke = process.argv.includes('--smoke');
const N = smoke ? 2000 : Number(process.argv.find((a) => /^\d+$/.test(a)) || 100000);
const PRELOAD = path.join(__dirname, '..', 'dist', 'preload.js');

if (process.env.SOAK_CHILD) {
  const net = require('node:net');
  const fds = () => fs.readdirSync('/proc/self/fd').length;
  const sample = (i) => { global.gc(); const m = process.memoryUsage(); return { conns: i, fds: fds(), rssMiB: +(m.rss / 1048576).toFixed(1), heapMiB: +(m.heapUsed / 1048576).toFixed(2) }; };
  const server = net.createServer((s) => { s.on('data', (d) => s.end(d)); s.on('error', () => {}); });
  server.listen(0, '127.0.0.1', async () => {
    const port = server.address().port;
    const samples = [];
    const t0 = Date.now();
    for (let i = 0; i < N; i++) {
      if (i % (N / 10) === 0) samples.push(sample(i));
      await new Promise((resolve, reject) => {
        const c = net.connect(port, '127.0.0.1', () => c.write('x'));
        c.on('data', () => c.destroy());
        c.on('close', resolve);
        c.on('error', reject);
      });
    }
    await new Promise((r) => setImmediate(r));
    samples.push(sample(N));
    const hook = globalThis[Symbol.for('smc-run.hook')];
    process.stdout.write(JSON.stringify({ n: N, seconds: (Date.now() - t0) / 1000, hook: hook && hook.stats, samples }) + '\n');
    server.close();
  });
} else {
  const env = { ...process.env, SOAK_CHILD: '1', SMC_RUN_SOCKET_FAMILY: 'inet', NODE_OPTIONS: `--require "${PRELOAD}"` };
  const r = JSON.parse(execFileSync(process.execPath, ['--expose-gc', __filename, String(N)], { env, encoding: 'utf8' }));
  // the same program without the shim: what RSS does by itself (allocator, V8) over as many connections
  const plain = JSON.parse(execFileSync(process.execPath, ['--expose-gc', __filename, String(N)], { env: { ...env, NODE_OPTIONS: '' }, encoding: 'utf8' }));
  r.plain = { seconds: plain.seconds, samples: plain.samples };
  const first = r.samples[1] ?? r.samples[0]; // after the first N/10: warm
  const last = r.samples[r.samples.length - 1];
  r.growth = { fds: last.fds - r.samples[0].fds, rssMiB: +(last.rssMiB - first.rssMiB).toFixed(1), heapMiB: +(last.heapMiB - first.heapMiB).toFixed(2) };
  console.log(`${r.n} connections through the hook in ${r.seconds} s; hook: ${JSON.stringify(r.hook)}`);
  for (const s of r.samples) console.log(`  after ${String(s.conns).padStart(6)}: fds ${s.fds}, rss ${s.rssMiB} MiB, heap ${s.heapMiB} MiB`);
  console.log(`growth from ${first.conns} to ${last.conns} connections: fds ${r.growth.fds}, rss ${r.growth.rssMiB} MiB, heap ${r.growth.heapMiB} MiB`);
  const pf = plain.samples[1] ?? plain.samples[0];
  const pl = plain.samples[plain.samples.length - 1];
  r.plain.growth = { fds: pl.fds - plain.samples[0].fds, rssMiB: +(pl.rssMiB - pf.rssMiB).toFixed(1), heapMiB: +(pl.heapMiB - pf.heapMiB).toFixed(2) };
  console.log(`without the shim (${plain.seconds} s): fds ${r.plain.growth.fds}, rss ${r.plain.growth.rssMiB} MiB, heap ${r.plain.growth.heapMiB} MiB; rss ${plain.samples.map((x) => x.rssMiB).join(' ')}`);
  if (r.hook.smc !== r.n + 1) console.log(`(hook adopted ${r.hook.smc} sockets for ${r.n} connections and one listener: expected n + 1)`);
  if (!smoke) fs.writeFileSync(path.join(__dirname, 'results', 'soak-host.json'), JSON.stringify(r, null, 2) + '\n');
}
