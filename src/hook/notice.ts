// The fallback notice: exactly one line for a whole process tree started by one launcher. Every Node
// process in the tree runs the shim; the first to create the session's marker file prints the line. The
// markers live in a directory only the user can write (noticeMarkerDir): in the shared temp directory
// another user could pre-create one and silence the notice.
//
// The launcher execs the program, so no process stays behind to remove the marker: the session is
// "PID-STARTTIME" of the exec'd program (bin/smc-run writes it), and whoever creates a marker removes
// those of sessions whose process is gone, judged by /proc/PID/stat's start time. So at most one
// finished session's marker is left at any time (the last one to print a notice), never a pile. (No exit
// handler removes it: that would cost every launched program a module load at start-up.)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { log } from '../log';
import { processStartTime } from '../proc/stat';

const PREFIX = 'smc-run-';
const SUFFIX = '.notice';

/** os.tmpdir() without loading node:os (this runs in the preload). */
function tmpdir(): string {
  const dir = process.env.TMPDIR || process.env.TMP || process.env.TEMP || '/tmp';
  return dir.length > 1 && dir.endsWith('/') ? dir.slice(0, -1) : dir;
}

const uid = (): number => (typeof process.geteuid === 'function' ? process.geteuid() : 0);

/** A real directory (not a symlink) of this user that nobody else can write into. */
function ownedPrivateDir(dir: string, exactMode: boolean): boolean {
  try {
    const st = fs.lstatSync(dir);
    const mode = st.mode & 0o777;
    return st.isDirectory() && st.uid === uid() && (exactMode ? mode === 0o700 : (mode & 0o022) === 0);
  } catch {
    return false;
  }
}

/**
 * Where this user's markers live: a directory only the user can write, so another user can never
 * pre-create a marker and silence a notice. XDG_RUNTIME_DIR when it is the user's own with mode 0700,
 * else $TMPDIR/smc-run-UID (made with mode 0700). undefined when neither can be trusted (someone else made
 * it, it is a symlink, others may write it): then no marker is used and every notice is printed.
 */
export function noticeMarkerDir(): string | undefined {
  const runtime = process.env.XDG_RUNTIME_DIR;
  if (runtime && path.isAbsolute(runtime) && ownedPrivateDir(runtime, true)) return runtime;
  const dir = path.join(tmpdir(), `${PREFIX}${uid()}`);
  try {
    fs.mkdirSync(dir, 0o700);
  } catch {
    // there already (ours or not: the check below tells), or tmp is not writable
  }
  return ownedPrivateDir(dir, false) ? dir : undefined;
}

/** The marker of a session, or undefined when there is no trusted place for markers. */
export function noticeMarkerPath(session: string): string | undefined {
  const dir = noticeMarkerDir();
  return dir === undefined ? undefined : path.join(dir, `${PREFIX}${uid()}-${session.replace(/[^A-Za-z0-9_-]/g, '')}${SUFFIX}`);
}

/** A marker another process of this user created: a regular file of ours, nothing else counts. */
function isOurMarker(file: string): boolean {
  try {
    const st = fs.lstatSync(file);
    return st.isFile() && st.uid === uid();
  } catch {
    return false;
  }
}

/** Whether the process a session belongs to still runs ("PID-START", or a PID first). */
export function sessionAlive(session: string): boolean {
  const m = /^(?:[a-z]+-)?(\d+)(?:-(\d+))?/.exec(session);
  if (!m) return true; // not ours to judge
  // our own session is alive by definition; and its start time cannot be checked from inside: under
  // qemu-user (an emulated Node, e.g. a multi-arch container build) /proc/self/stat reports the emulator's
  // start, a few ticks after the one the launcher wrote (measured: 1278262 vs 1278260), so the program
  // swept its own marker and a child printed the notice a second time
  if (Number(m[1]) === process.pid) return true;
  const started = processStartTime(Number(m[1]));
  if (started === undefined) return false;
  return m[2] === undefined || m[2] === '0' || m[2] === started;
}

/** Removes this user's markers whose session's process is gone; returns how many. */
export function sweepStaleMarkers(dir = noticeMarkerDir()): number {
  if (dir === undefined) return 0;
  const mine = `${PREFIX}${uid()}-`;
  let removed = 0;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    if (!name.startsWith(mine) || !name.endsWith(SUFFIX)) continue;
    if (sessionAlive(name.slice(mine.length, -SUFFIX.length))) continue;
    try {
      fs.unlinkSync(path.join(dir, name));
      removed++;
    } catch {
      /* someone else removed it */
    }
  }
  return removed;
}

const shownInProcess = new Set<string>();

/**
 * Prints a notice of one kind unless this process or (with a session) another process of the tree printed
 * that kind already. Each kind has its own marker ("fallback" is the session's own name, another kind adds
 * "-KIND"), and whoever creates a marker sweeps those of finished sessions.
 */
export function noticeOnce(message: string, session: string | undefined, kind = 'fallback'): void {
  if (shownInProcess.has(kind)) return;
  shownInProcess.add(kind);
  const marker = session ? noticeMarkerPath(kind === 'fallback' ? session : `${session}-${kind}`) : undefined;
  if (marker !== undefined) {
    try {
      // O_EXCL never follows a symlink: an existing name of any kind is EEXIST
      fs.closeSync(fs.openSync(marker, 'wx', 0o600));
    } catch (e) {
      // printed already by this tree, unless the name is not a marker of ours (then print: never silenced)
      if ((e as NodeJS.ErrnoException).code === 'EEXIST' && isOurMarker(marker)) return;
      // marker impossible (read-only tmp): better a repeated line than a silent fallback
    }
    sweepStaleMarkers(path.dirname(marker));
  }
  log.warn(message);
}
