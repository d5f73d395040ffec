'use strict';
// npm run bench:overhead — what the hook costs, measured side by side in one run on this host:
// plain node (A) against node with the shim installed (B, test mode: the addon makes plain inet
// sockets, so the hook does all its work on a kernel without SMC). Rounds alternate A/B so that drift
// hits both. Prints ratios (B/A for rates, B-A for start-up) and writes bench/results/overhead-host.json.
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const PRELOAD = path.join(ROOT, 'dist', 'preload.js');
const BIN = path.join(ROOT, 'bin', 'smc-run');
const smoke = process.argv.includes('--smoke');
const ROUNDS = smoke ? 2 : 5;
const CONNS = smoke ? 300 : 4000; // x5 rounds = 20,000 per side
const BULK_PER_ROUND = smoke ? 32 << 20 : 1 << 30; // a 1 GiB transfer per round and side
const STARTS = smoke ? 5 : 20;
const node = process.execPath;
const hooked = { ...process.env, SMC_RUN_SOCKET_FAMILY: 'inet', NODE_OPTIONS: `--require "${PRELOAD}"` };
const plain = { ...process.env, NODE_OPTIONS: '' };
delete plain.SMC_RUN_SOCKET_FAMILY;

const median = (a) => { const s = [...a].sort((x, y) => x - y); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const runJson = (env, script, args) => JSON.parse(execFileSync(node, [path.join(__dirname, 'workloads', script), ...args], { env, encoding: 'utf8' }).trim());

function timeStart(env, args) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(args[0], args.slice(1), { env, stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const result = { host: { node: process.version, kernel: os.release(), cpus: os.cpus().length, cpu: os.cpus()[0]?.model }, smoke, rounds: ROUNDS };
const conn = { A: [], B: [] };
const bulk = { A: [], B: [] };
for (let r = 0; r < ROUNDS; r++) {
  for (const [side, env] of r % 2 ? [['B', hooked], ['A', plain]] : [['A', plain], ['B', hooked]]) {
    const c = runJson(env, 'conn.cjs', [String(CONNS)]);
    conn[side].push((c.n / c.ms) * 1000);
    const b = runJson(env, 'bulk.cjs', [String(BULK_PER_ROUND)]);
    bulk[side].push(b.bytes / 1048576 / (b.ms / 1000));
  }
}
const starts = { plain: [], shim: [], launcher: [], plainNet: [], shimNet: [] };
// a network program loads node:net (and its stream internals) anyway; `-e 0` charges them to the shim
const NET = "require('node:net')";
for (let i = 0; i < STARTS; i++) {
  starts.plain.push(timeStart(plain, [node, '-e', '0']));
  starts.shim.push(timeStart(hooked, [node, '-e', '0']));
  starts.plainNet.push(timeStart(plain, [node, '-e', NET]));
  starts.shimNet.push(timeStart(hooked, [node, '-e', NET]));
  starts.launcher.push(timeStart({ ...plain, SMC_RUN_SOCKET_FAMILY: 'inet' }, [node, BIN, node, '-e', '0']));
}
result.connPerSec = { plain: median(conn.A), hooked: median(conn.B), ratio: median(conn.B) / median(conn.A), target: 0.97, connectionsPerSide: CONNS * ROUNDS };
result.bulkMiBps = { plain: median(bulk.A), hooked: median(bulk.B), ratio: median(bulk.B) / median(bulk.A), target: 0.98, bytesPerRound: BULK_PER_ROUND };
result.startupMs = {
  plain: median(starts.plain), shim: median(starts.shim), shimAdds: median(starts.shim) - median(starts.plain), target: 15,
  launcher: median(starts.launcher), launcherAdds: median(starts.launcher) - median(starts.plain),
  plainNet: median(starts.plainNet), shimNet: median(starts.shimNet), shimAddsToNetProgram: median(starts.shimNet) - median(starts.plainNet),
};
const f = (x) => x.toFixed(2);
console.log(`smc-run hook overhead on ${os.hostname()} (${result.host.cpu}, ${result.host.cpus} cpus, node ${process.version}); medians of ${ROUNDS} alternating rounds`);
console.log(`connect+echo+close/s   plain ${f(result.connPerSec.plain)}  hooked ${f(result.connPerSec.hooked)}  ratio ${f(result.connPerSec.ratio)} (target >= 0.97)`);
console.log(`bulk MiB/s             plain ${f(result.bulkMiBps.plain)}  hooked ${f(result.bulkMiBps.hooked)}  ratio ${f(result.bulkMiBps.ratio)} (target >= 0.98)`);
console.log(`start-up ms (median ${STARTS})  node -e 0 ${f(result.startupMs.plain)}  + shim ${f(result.startupMs.shim)} (adds ${f(result.startupMs.shimAdds)}, target <= 15)  smc-run node -e 0 ${f(result.startupMs.launcher)} (adds ${f(result.startupMs.launcherAdds)})`);
console.log(`start-up of a program that loads node:net: ${f(result.startupMs.plainNet)} ms, with the shim ${f(result.startupMs.shimNet)} (adds ${f(result.startupMs.shimAddsToNetProgram)})`);
if (!smoke) {
  fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  fs.writeFileSync(path.join(__dirname, 'results', 'overhead-host.json'), JSON.stringify(result, null, 2) + '\n');
}
