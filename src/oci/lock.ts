// One OCI hook at a time over the records and the switch they describe. The containers of a pod start and
// stop side by side, and poststop's "am I the last one of this scope?" is only true while no createRuntime
// of the same scope runs between its reading of the records and its disable. An flock(2) on a file beside
// the records: the kernel drops it when its holder dies, so a hook killed half-way never blocks the next.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { addon, isSystemError } from '../native';
import { recordsDir } from './records';

const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;

/** How long a hook waits for another one: runtimes give a hook about a minute before they kill it. */
export const LOCK_WAIT_MS = 30_000;

const nap = new Int32Array(new SharedArrayBuffer(4));

/** Runs fn holding the records' lock; throws one line when another hook holds it for longer than waitMs. */
export function withRecordsLock<T>(fn: () => T, dir = recordsDir(), waitMs = LOCK_WAIT_MS): T {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const fd = fs.openSync(path.join(dir, '.lock'), fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
  try {
    const deadline = Date.now() + waitMs;
    for (;;) {
      try {
        addon().flock(fd, LOCK_EX | LOCK_NB);
        break;
      } catch (e) {
        if (!isSystemError(e) || e.code !== 'EAGAIN') throw e;
        if (Date.now() >= deadline) throw new Error(`another smc-run oci-hook has held ${path.join(dir, '.lock')} for ${waitMs / 1000} s`);
        Atomics.wait(nap, 0, 0, 20);
      }
    }
    try {
      return fn();
    } finally {
      addon().flock(fd, LOCK_UN);
    }
  } finally {
    fs.closeSync(fd);
  }
}
