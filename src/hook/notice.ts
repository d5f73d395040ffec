// The fallback notice: exactly one line for a whole process tree started by one launcher. Every Node
// process in the tree runs the shim; the first to create the session's marker file prints the line.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { log } from '../log';

export function noticeMarkerPath(session: string): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  return path.join(os.tmpdir(), `smc-run-${uid}-${session.replace(/[^A-Za-z0-9_-]/g, '')}.notice`);
}

let shownInProcess = false;

/** Prints the notice unless this process or (with a session) another process of the tree did. */
export function noticeOnce(message: string, session: string | undefined): void {
  if (shownInProcess) return;
  shownInProcess = true;
  if (session) {
    try {
      fs.closeSync(fs.openSync(noticeMarkerPath(session), 'wx', 0o600));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return;
      // marker impossible (read-only tmp): better a repeated line than a silent fallback
    }
  }
  log.warn(message);
}
