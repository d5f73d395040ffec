'use strict';
// Peer agent for the SMC-R suite, run in guest b. Tests in guest a drive it through the shared run
// directory (uncached 9p): a writes agent/cmd-<n>.json, the agent runs it and writes agent/res-<n>.json.
//   { op: 'start', name, args: [echo.cjs role, host, port?] }  -> { port }   (under smc-run, or plain: true)
//   { op: 'exec', name, argv, ready }  -> {} once a line of the program's stdout matches the regex ready:
//                           any program under smc-run (e.g. redis-server), stopped and killed as 'start's
//   { op: 'conns', name }   -> { conns }   lines the server printed so far (its ends' SMC modes)
//   { op: 'stop' | 'kill', name }  -> {}   SIGTERM (forwarded by the launcher) / SIGKILL to the server and launcher
//   { op: 'run', argv }     -> { code, stdout, stderr }   e.g. smc-run stats sockets --json
//   { op: 'exit' }          -> the agent ends, and with it this guest (a clean power-off)
//   { op: 'power-cut' }     -> {} then this guest stops dead (sysrq b): the "peer lost power" fault
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const RUN = process.env.SMC_RUN_VM_RUN;
const REPO = path.join(__dirname, '..', '..', '..');
const DIR = path.join(RUN, 'agent');
fs.mkdirSync(DIR, { recursive: true });
const children = new Map();

function writeAtomic(file, obj) {
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(obj));
  fs.renameSync(`${file}.tmp`, file);
}

/**
 * Spawns argv as the named child (stop/kill/conns find it) and answers once: with what onLine returns
 * for a line of its stdout (undefined: keep reading), or with an error if it exits first.
 */
function launch(name, argv, opts, onLine) {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    const entry = { child, conns: [], stderr: '' };
    children.set(name, entry);
    let buf = '';
    let answered = false;
    const answer = (res) => { if (!answered) { answered = true; resolve(res); } };
    child.stderr.on('data', (d) => (entry.stderr += d));
    child.stdout.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const res = onLine(buf.slice(0, i), entry);
        buf = buf.slice(i + 1);
        if (res !== undefined) answer(res);
      }
    });
    child.on('exit', (code) => answer({ error: `exited ${code}: ${entry.stderr}` }));
  });
}

function start(cmd) {
  const script = [path.join(REPO, 'test', 'scenarios', 'echo.cjs'), ...cmd.args];
  const argv = cmd.plain ? [process.execPath, ...script] : [process.execPath, path.join(REPO, 'bin', 'smc-run'), ...(cmd.launcherArgs || []), process.execPath, ...script];
  return launch(cmd.name, argv, {}, (line, entry) => {
    const msg = JSON.parse(line);
    if (msg.server) entry.conns.push(msg.server);
    return msg.listening !== undefined ? { port: msg.listening } : undefined;
  });
}

function exec(cmd) {
  const ready = new RegExp(cmd.ready);
  return launch(cmd.name, [path.join(REPO, 'bin', 'smc-run'), ...cmd.argv], { cwd: RUN }, (line) => (ready.test(line) ? {} : undefined));
}

/** Every process below pid, deepest first (from /proc/PID/task/TID/children). */
function descendants(pid) {
  let kids = [];
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      kids.push(...fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
    }
  } catch { kids = []; }
  return kids.flatMap((k) => [...descendants(k), k]);
}

async function handle(cmd) {
  const entry = children.get(cmd.name);
  switch (cmd.op) {
    case 'start': return start(cmd);
    case 'exec': return exec(cmd);
    case 'conns': return { conns: entry ? entry.conns : [], stderr: entry ? entry.stderr : '' };
    case 'stop': case 'kill':
      if (entry && entry.child.exitCode === null) {
        const gone = new Promise((r) => entry.child.once('exit', r));
        if (cmd.op === 'kill') {
          // SIGKILL cannot be forwarded: killing only the launcher would leave the server (its child) running
          for (const pid of descendants(entry.child.pid)) try { process.kill(pid, 'SIGKILL'); } catch {}
          entry.child.kill('SIGKILL');
        } else {
          entry.child.kill('SIGTERM'); // the launcher forwards it to the server
        }
        await gone;
      }
      return {};
    case 'run': {
      const r = spawnSync(cmd.argv[0], cmd.argv.slice(1), { cwd: REPO, encoding: 'utf8', timeout: 120000 });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    }
    default: return { error: `unknown op ${cmd.op}` };
  }
}

/**
 * The peer host losing power: no FIN, no SMC close or abort message, no RDMA teardown. sysrq 'b' reboots
 * at once without shutting devices down, and qemu (-no-reboot) exits. A clean power-off ('o') is not a
 * cut: the dying kernel still closes its connections. This guest's exit code is written first (0: the
 * cut was asked for), since init will never get to it.
 */
function powerCut(n) {
  writeAtomic(path.join(DIR, `res-${n}.json`), {});
  fs.writeFileSync(path.join(RUN, `rc-${process.env.SMC_RUN_GUEST_NAME || 'b'}`), '0\n');
  fs.writeFileSync('/proc/sysrq-trigger', 'b');
}

async function main() {
  fs.writeFileSync(path.join(RUN, 'b-ready'), '');
  for (let n = 1; ; n++) {
    const file = path.join(DIR, `cmd-${n}.json`);
    while (!fs.existsSync(file)) {
      if (fs.existsSync(path.join(RUN, 'rc-a'))) return; // a's job ended without asking us to exit
      await new Promise((r) => setTimeout(r, 100));
    }
    const cmd = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (cmd.op === 'exit') { writeAtomic(path.join(DIR, `res-${n}.json`), {}); return; }
    if (cmd.op === 'power-cut') powerCut(n);
    let res;
    try { res = await handle(cmd); } catch (e) { res = { error: String(e && e.message) }; }
    writeAtomic(path.join(DIR, `res-${n}.json`), res);
  }
}

main().then(() => { for (const { child } of children.values()) child.kill('SIGKILL'); process.exit(0); });
