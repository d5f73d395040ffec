'use strict';
// Bench children that speak JSON lines on stdout: a server whose first line says where it listens, and a
// client whose last line is its result. stderr goes to the bench's own.
const { spawn } = require('node:child_process');
const readline = require('node:readline');

/** Starts argv; resolves { proc, info } with info its first stdout line, parsed. */
function startServer(argv, env) {
  return new Promise((resolve, reject) => {
    const p = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'inherit'] });
    readline.createInterface({ input: p.stdout }).once('line', (line) => { try { resolve({ proc: p, info: JSON.parse(line) }); } catch { reject(new Error(`server said ${line}`)); } });
    p.once('exit', (code) => reject(new Error(`server exited ${code} before listening`)));
  });
}

/** Runs argv to its end; resolves its last stdout line, parsed (rejects on a non-zero exit). */
function runClient(argv, env) {
  return new Promise((resolve, reject) => {
    const p = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.once('exit', (code) => { if (code !== 0) return reject(new Error(`client exited ${code}`)); try { resolve(JSON.parse(out.trim().split('\n').pop())); } catch { reject(new Error(`client said ${out}`)); } });
  });
}

module.exports = { startServer, runClient };
