// The one-notice-per-tree markers (src/hook/notice.ts): which sessions count as finished, what a sweep
// removes, and that no other user can silence a notice: markers live in a directory only the user can write,
// and a name that is not the user's own regular file never counts as "printed already".
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
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

const euid = process.geteuid?.() ?? 0;
const asRoot = euid === 0;
/** A uid that is not ours: "another user" (chown needs root). */
const OTHER = euid === 65534 ? 65533 : 65534;

/** The notice module as a new process of the tree sees it: nothing shown yet in this process. */
async function freshProcess() {
  vi.resetModules();
  const notice = await import('../../src/hook/notice');
  const { log } = await import('../../src/log');
  const printed: string[] = [];
  vi.spyOn(log, 'warn').mockImplementation((m: string) => void printed.push(m));
  return { ...notice, printed };
}

describe('no other user can silence a notice', () => {
  let tmp: string;
  const saved = { TMPDIR: process.env.TMPDIR, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR };
  const session = `${process.pid}-1`;
  beforeEach(() => {
    // a stand-in for the shared /tmp: world-writable and sticky
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-sharedtmp-'));
    fs.chmodSync(tmp, 0o1777);
    dirs.push(tmp);
    process.env.TMPDIR = tmp;
    delete process.env.XDG_RUNTIME_DIR;
  });
  afterEach(() => {
    vi.restoreAllMocks();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  const userDir = (): string => path.join(tmp, `smc-run-${euid}`);

  it('one notice per tree: the marker is in $TMPDIR/smc-run-UID, made with mode 0700', async () => {
    const first = await freshProcess();
    first.noticeOnce('no SMC here', session);
    expect(first.printed).toEqual(['no SMC here']);
    const st = fs.lstatSync(userDir());
    expect([st.isDirectory(), st.mode & 0o777, st.uid]).toEqual([true, 0o700, euid]);
    expect(fs.readdirSync(userDir())).toEqual([`smc-run-${euid}-${session}.notice`]);
    const second = await freshProcess();
    second.noticeOnce('no SMC here', session);
    expect(second.printed).toEqual([]);
  });

  it.runIf(asRoot)('a marker pre-created by another user at the old shared name does not silence it', async () => {
    const planted = path.join(tmp, `smc-run-${euid}-${session}.notice`);
    fs.writeFileSync(planted, '');
    fs.chownSync(planted, OTHER, OTHER);
    const p = await freshProcess();
    p.noticeOnce('no SMC here', session);
    expect(p.printed).toEqual(['no SMC here']);
  });

  it.runIf(asRoot)('a marker of another owner, or a symlink, in the directory does not count as printed', async () => {
    fs.mkdirSync(userDir(), 0o700);
    const other = path.join(userDir(), `smc-run-${euid}-${session}.notice`);
    fs.writeFileSync(other, '');
    fs.chownSync(other, OTHER, OTHER);
    const a = await freshProcess();
    a.noticeOnce('no SMC here', session);
    expect(a.printed).toEqual(['no SMC here']);
    fs.symlinkSync('/etc/hostname', path.join(userDir(), `smc-run-${euid}-${session}-tcp-retry.notice`));
    const b = await freshProcess();
    b.noticeOnce('retried over TCP', session, 'tcp-retry');
    expect(b.printed).toEqual(['retried over TCP']);
  });

  it.runIf(asRoot)('$TMPDIR/smc-run-UID made by another user: not used, and every process prints', async () => {
    fs.mkdirSync(userDir(), 0o777);
    fs.chownSync(userDir(), OTHER, OTHER);
    for (let i = 0; i < 2; i++) {
      const p = await freshProcess();
      expect(p.noticeMarkerDir()).toBeUndefined();
      p.noticeOnce('no SMC here', session);
      expect(p.printed).toEqual(['no SMC here']);
    }
    expect(fs.readdirSync(userDir())).toEqual([]);
  });

  it('$TMPDIR/smc-run-UID as a symlink (even to a 0700 directory of ours): not used, and every process prints', async () => {
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-elsewhere-'));
    dirs.push(elsewhere);
    fs.symlinkSync(elsewhere, userDir());
    for (let i = 0; i < 2; i++) {
      const p = await freshProcess();
      expect(p.noticeMarkerDir()).toBeUndefined();
      p.noticeOnce('no SMC here', session);
      expect(p.printed).toEqual(['no SMC here']);
    }
    expect(fs.readdirSync(elsewhere)).toEqual([]);
  });

  it('$TMPDIR/smc-run-UID that others may write (0777, ours): not used', async () => {
    fs.mkdirSync(userDir());
    fs.chmodSync(userDir(), 0o777);
    const p = await freshProcess();
    expect(p.noticeMarkerDir()).toBeUndefined();
    p.noticeOnce('no SMC here', session);
    expect(p.printed).toEqual(['no SMC here']);
    expect(fs.readdirSync(userDir())).toEqual([]);
  });

  it('XDG_RUNTIME_DIR when it is ours with mode 0700; otherwise the per-user temp directory', async () => {
    const runtime = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-xdg-'));
    dirs.push(runtime);
    fs.chmodSync(runtime, 0o700);
    process.env.XDG_RUNTIME_DIR = runtime;
    const p = await freshProcess();
    expect(p.noticeMarkerDir()).toBe(runtime);
    p.noticeOnce('no SMC here', session);
    expect(fs.readdirSync(runtime)).toEqual([`smc-run-${euid}-${session}.notice`]);
    fs.chmodSync(runtime, 0o755);
    expect(p.noticeMarkerDir()).toBe(userDir());
    const link = path.join(tmp, 'xdg-link');
    fs.chmodSync(runtime, 0o700);
    fs.symlinkSync(runtime, link);
    process.env.XDG_RUNTIME_DIR = link;
    expect(p.noticeMarkerDir()).toBe(userDir());
    if (asRoot) {
      process.env.XDG_RUNTIME_DIR = runtime;
      fs.chownSync(runtime, OTHER, OTHER);
      expect(p.noticeMarkerDir()).toBe(userDir());
    }
  });
});
