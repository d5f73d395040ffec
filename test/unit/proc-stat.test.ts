import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { processStartTime } from '../../src/proc/stat';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('processStartTime (/proc/PID/stat)', () => {
  it('reads field 22 of a live process, also when its command holds spaces and parentheses', async () => {
    const own = processStartTime(process.pid);
    expect(own).toMatch(/^\d+$/);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-stat-'));
    const odd = path.join(dir, 'a) (b c');
    fs.copyFileSync(spawnSync('sh', ['-c', 'command -v sleep'], { encoding: 'utf8' }).stdout.trim(), odd);
    fs.chmodSync(odd, 0o755);
    const child = spawn(odd, ['5'], { stdio: 'ignore' });
    try {
      await sleep(200);
      expect(fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8')).toContain('(a) (b c)');
      const t = processStartTime(child.pid!);
      expect(t).toMatch(/^\d+$/);
      // started after this process: a later (or the same) tick
      expect(Number(t)).toBeGreaterThanOrEqual(Number(own));
    } finally {
      child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('undefined for a PID with no process and for a zombie', async () => {
    expect(processStartTime(2 ** 22 + 1)).toBeUndefined(); // above pid_max's limit: never a process
    // a zombie: sh's background child exits once its parent is sleep (sh exec'd into it), which never reaps
    // it. The child waits for a line on fd 3 (sh's stdin), sent only after the exec: a child that ended
    // before it would have been reaped by sh itself, as happened on a loaded machine.
    const parent = spawn('sh', ['-c', 'exec 3<&0; read x <&3 & echo $!; exec sleep 5'], { stdio: ['pipe', 'pipe', 'ignore'] });
    try {
      const pid = Number(await new Promise<string>((r) => parent.stdout.once('data', (d: Buffer) => r(d.toString()))));
      for (let i = 0; i < 100 && fs.readFileSync(`/proc/${parent.pid}/comm`, 'utf8').trim() !== 'sleep'; i++) await sleep(50);
      expect(fs.readFileSync(`/proc/${parent.pid}/comm`, 'utf8').trim()).toBe('sleep');
      parent.stdin.end('go\n');
      let state = '';
      for (let i = 0; i < 50 && state !== 'Z'; i++) {
        await sleep(100);
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '';
      }
      expect(state).toBe('Z');
      expect(processStartTime(pid)).toBeUndefined();
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
