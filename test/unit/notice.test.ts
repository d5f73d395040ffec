// The one-notice-per-tree markers (src/hook/notice.ts): which sessions count as finished, and what a
// sweep removes.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sessionAlive, sweepStaleMarkers } from '../../src/hook/notice';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function startTicks(pid: number): string {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[19]!;
}

describe('notice markers', () => {
  it('a session is alive while its process runs with the start time the launcher wrote', () => {
    const ppid = process.ppid;
    const started = startTicks(ppid);
    expect(sessionAlive(`${ppid}-${started}`)).toBe(true);
    expect(sessionAlive(`${ppid}-${started}-tcp-retry`)).toBe(true);
    // the PID now belongs to another process (reused): that session is over
    expect(sessionAlive(`${ppid}-${Number(started) + 1}`)).toBe(false);
    const gone = spawnSync('true').pid!;
    expect(sessionAlive(`${gone}-1`)).toBe(false);
    expect(sessionAlive('not-a-session')).toBe(true); // not ours to judge
  });

  it("the program's own session is alive whatever start time it reads for itself (qemu-user fakes it)", () => {
    expect(sessionAlive(`${process.pid}-1`)).toBe(true);
    expect(sessionAlive(`${process.pid}-${Number(startTicks(process.pid)) + 2}`)).toBe(true);
  });

  it('a sweep removes the markers of finished sessions of this user only, and keeps live ones', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-notice-'));
    dirs.push(dir);
    const uid = process.getuid?.() ?? 0;
    const gone = spawnSync('true').pid!;
    const names = {
      own: `smc-run-${uid}-${process.pid}-1.notice`,
      parent: `smc-run-${uid}-${process.ppid}-${startTicks(process.ppid)}-tcp-retry.notice`,
      gone: `smc-run-${uid}-${gone}-5.notice`,
      goneRetry: `smc-run-${uid}-${gone}-5-tcp-retry.notice`,
      otherUser: `smc-run-${uid + 1}-${gone}-5.notice`,
      unrelated: `other-${gone}.notice`,
    };
    for (const n of Object.values(names)) fs.writeFileSync(path.join(dir, n), '');
    expect(sweepStaleMarkers(dir)).toBe(2);
    expect(fs.readdirSync(dir).sort()).toEqual([names.own, names.parent, names.otherUser, names.unrelated].sort());
  });
});
