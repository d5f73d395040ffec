'use strict';
// net.smc.* sysctls for benchmarks, changed through the project's own command (a child process: it is
// what users run, so the benchmarks exercise it too). Asynchronous: under TCG the command takes seconds
// to start, and a process may change its value while its peer changes the peer's.
//
//   smcSysctl(args)            -> the parsed --json output of `smc-run sysctl ARGS --json`
//   setSmcSysctls({ name: v }) -> { name: previous value }   (names as the command takes them)
//   withSmcSysctls({ name: v }, fn) -> fn's result; the previous values are put back afterwards
//   withCoreSysctls({ wmem_max: v }, fn) -> the same for net.core.* (plain procfs: not smc-run's net.smc.*)
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const BIN = path.join(__dirname, '..', '..', 'bin', 'smc-run');

function smcSysctl(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'sysctl', ...args, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`smc-run sysctl ${args.join(' ')} exited ${code}: ${err.trim()}`));
      try { resolve(JSON.parse(out)); } catch (e) { reject(e); }
    });
  });
}

async function setSmcSysctls(values) {
  const names = Object.keys(values);
  const { changes } = await smcSysctl(['set', ...names.map((n) => `${n}=${values[n]}`)]);
  const previous = {};
  changes.forEach((c, i) => {
    if (String(c.new) !== String(values[names[i]])) throw new Error(`${c.name} reads ${c.new} after setting ${values[names[i]]}`);
    previous[names[i]] = c.old;
  });
  return previous;
}

async function withSmcSysctls(values, fn) {
  const previous = await setSmcSysctls(values);
  try {
    return await fn();
  } finally {
    await setSmcSysctls(previous);
  }
}

async function withCoreSysctls(values, fn) {
  const file = (n) => `/proc/sys/net/core/${n}`;
  const before = Object.keys(values).map((n) => [n, fs.readFileSync(file(n), 'utf8').trim()]);
  for (const n of Object.keys(values)) fs.writeFileSync(file(n), String(values[n]));
  try {
    return await fn();
  } finally {
    for (const [n, v] of before) fs.writeFileSync(file(n), v);
  }
}

module.exports = { smcSysctl, setSmcSysctls, withSmcSysctls, withCoreSysctls };
