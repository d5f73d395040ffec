// The OCI hook's lock over its records (src/oci/lock.ts): hooks that run side by side (the containers of a
// pod start and stop together) take turns, a held lock makes the next hook wait and then give up with one
// line, and a holder that dies (a hook killed half-way) frees it at once: flock(2), which the kernel drops
// with its holder. The lock as the hook uses it, across real processes (dist/ as npm test built it).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withRecordsLock } from '../../src/oci/lock';
import { REPO, run } from '../helpers/run';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-oci-lock-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

// one process: ROUNDS read-modify-write turns of a counter file, each under the lock, with a pause
// between the read and the write that lets another process in if the lock did not keep it out
const WORKER = `
const fs = require('fs');
const { withRecordsLock } = require(${JSON.stringify(path.join(REPO, 'dist', 'oci', 'lock.js'))});
const [dir, rounds] = process.argv.slice(1);
const file = dir + '/counter';
const nap = new Int32Array(new SharedArrayBuffer(4));
for (let i = 0; i < Number(rounds); i++) {
  withRecordsLock(() => {
    const n = Number(fs.readFileSync(file, 'utf8'));
    Atomics.wait(nap, 0, 0, 2);
    fs.writeFileSync(file, String(n + 1));
  }, dir);
}
`;

describe('the OCI hook lock', () => {
  it('three processes side by side, 30 turns each: every read-modify-write is kept (90)', async () => {
    const d = path.join(dir, 'turns');
    fs.mkdirSync(d);
    fs.writeFileSync(path.join(d, 'counter'), '0');
    const rs = await Promise.all([0, 1, 2].map(() => run(process.execPath, ['-e', WORKER, d, '30'])));
    for (const r of rs) expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(path.join(d, 'counter'), 'utf8')).toBe('90');
  });

  it('held by another process: waits, then one line naming the lock; the holder killed: taken at once', async () => {
    const d = path.join(dir, 'held');
    fs.mkdirSync(d);
    // flock(1) takes the same flock(2) lock on the same file; the shell then becomes sleep, which keeps
    // the locked fd: the process spawned here is the one holder
    const holder = spawn('sh', ['-c', 'exec 9>"$1" && flock 9 && echo held && exec sleep 600', 'sh', path.join(d, '.lock')], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.once('data', () => resolve());
        holder.once('exit', (c) => reject(new Error(`the holder exited (${c})`)));
      });
      let ran = false;
      const t0 = Date.now();
      expect(() => withRecordsLock(() => (ran = true), d, 300)).toThrow(`another smc-run oci-hook has held ${path.join(d, '.lock')} for 0.3 s`);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
      expect(ran).toBe(false);
      holder.kill('SIGKILL');
      await new Promise((r) => holder.once('exit', r));
      expect(withRecordsLock(() => 'mine', d, 0)).toBe('mine');
    } finally {
      holder.kill('SIGKILL');
    }
  });
});
