// stats system --save FILE as root in a directory others can write: the snapshot goes to a temp file that
// only this call can have created (O_EXCL|O_NOFOLLOW, a random name, mode 0600) and is renamed over FILE,
// so a symlink planted beside FILE, or FILE itself as a symlink, never makes the save write elsewhere.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseSystemStats } from '../../src/stats/system';
import { makeSnapshot, parseSnapshot, saveSnapshot, SnapshotError } from '../../src/cli/snapshot';
import { messages } from '../helpers/genl-fixtures';

const snapshot = () => makeSnapshot(parseSystemStats(messages('empty-get-stats'), messages('empty-get-fback-stats')), { bootId: 'b', netns: 'net:[1]' });

let dir: string;
let victim: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-save-'));
  // a file the saving user may write, the attacker may not: it must never change
  victim = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-victim-')), 'shadow');
  fs.writeFileSync(victim, 'precious\n', { mode: 0o644 });
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(path.dirname(victim), { recursive: true, force: true });
});

describe('saveSnapshot', () => {
  it('a symlink planted at the predictable temp name (.FILE.PID.tmp) is not followed', () => {
    const file = path.join(dir, 'smc.snap');
    fs.symlinkSync(victim, path.join(dir, `.smc.snap.${process.pid}.tmp`));
    saveSnapshot(file, snapshot());
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(parseSnapshot(fs.readFileSync(file, 'utf8'), file).bootId).toBe('b');
    expect(fs.lstatSync(file).isFile()).toBe(true);
  });

  it('the snapshot has mode 0600, whatever the umask allows', () => {
    const file = path.join(dir, 'smc.snap');
    const old = process.umask(0o000);
    try {
      saveSnapshot(file, snapshot());
    } finally {
      process.umask(old);
    }
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('FILE itself a symlink: the link is replaced, its target untouched', () => {
    const file = path.join(dir, 'smc.snap');
    fs.symlinkSync(victim, file);
    saveSnapshot(file, snapshot());
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(fs.lstatSync(file).isFile()).toBe(true);
  });

  it('replaces an older snapshot, and leaves no temp file behind', () => {
    const file = path.join(dir, 'smc.snap');
    fs.writeFileSync(file, 'old');
    saveSnapshot(file, snapshot());
    saveSnapshot(file, snapshot());
    expect(fs.readdirSync(dir)).toEqual(['smc.snap']);
    expect(parseSnapshot(fs.readFileSync(file, 'utf8'), file).format).toBe('smc-run-stats-snapshot');
  });

  it('a directory that does not exist: SnapshotError ENOENT, one line', () => {
    const file = path.join(dir, 'no', 'smc.snap');
    let e: unknown;
    try {
      saveSnapshot(file, snapshot());
    } catch (err) {
      e = err;
    }
    expect(e).toBeInstanceOf(SnapshotError);
    expect(e).toMatchObject({ code: 'ENOENT', message: `cannot save the snapshot ${file}: ENOENT` });
  });
});
