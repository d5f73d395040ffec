'use strict';
// Helpers for scenario programs: each scenario runs under `smc-run node`, moves data, records the SMC
// mode of its own connections (getSmcInfo on both ends) and prints one result line on stdout.
const crypto = require('node:crypto');
const path = require('node:path');

const api = require(path.join(__dirname, '..', '..', 'dist', 'index.js'));
const RESULT_MARK = 'SCENARIO_RESULT ';

/** Mode of one socket as getSmcInfo sees it; errors are recorded, not thrown. */
function probe(side, socket) {
  try {
    const info = api.getSmcInfo(socket);
    return { side, mode: info.mode, fallback: info.fallback ? info.fallback.name : null, peer: info.fallback ? info.fallback.peerName : null };
  } catch (e) {
    return { side, mode: 'error', error: String(e && e.message) };
  }
}

function sha256(buf) {
  return crypto.createHash('sha256').update(buf).digest('hex');
}

function report(result) {
  const hook = api.hookStats();
  process.stdout.write(RESULT_MARK + JSON.stringify({ pid: process.pid, hook: hook || null, ...result }) + '\n');
}

function fail(e) {
  report({ ok: false, error: String((e && e.stack) || e) });
  // servers and sockets of a failed scenario may keep the loop alive: end the process
  process.exit(1);
}

/** Echo server helper: returns a promise of { received, hash } for one socket until it ends. */
function collect(socket) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    socket.on('data', (d) => chunks.push(d));
    socket.on('end', () => {
      const b = Buffer.concat(chunks);
      resolve({ length: b.length, hash: sha256(b) });
    });
    socket.on('error', reject);
  });
}

function withTimeout(promise, ms, what) {
  let t;
  return Promise.race([
    promise,
    new Promise((_, reject) => { t = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms); }),
  ]).finally(() => clearTimeout(t));
}

module.exports = { api, probe, sha256, report, fail, collect, withTimeout, RESULT_MARK };
