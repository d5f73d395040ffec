// Replacing a file as root in a directory other users may write (/tmp): the data goes to a new file that
// only this call can have created (O_CREAT|O_EXCL|O_NOFOLLOW, a random name, mode 0600), is fsynced and
// renamed over the final name. A symlink planted beside the file, or the file itself as a symlink, can never
// make the write land elsewhere: O_EXCL refuses any existing name, and rename replaces a link, not its target.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

const { O_CREAT, O_EXCL, O_NOFOLLOW, O_WRONLY } = fs.constants;

/** Writes data to file atomically (readers see the old file or the new one), mode 0600. Throws errno errors. */
export function replaceFileAtomically(file: string, data: string | Buffer): void {
  const dir = path.dirname(file);
  let tmp: string | undefined;
  let fd: number | undefined;
  try {
    // a name taken by chance (or by anyone) is refused by O_EXCL: another random name, a few times
    for (let tries = 0; fd === undefined; tries++) {
      const name = path.join(dir, `.${path.basename(file)}.${randomBytes(12).toString('hex')}.tmp`);
      try {
        fd = fs.openSync(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
        tmp = name;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || tries >= 8) throw e;
      }
    }
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp as string, file);
    tmp = undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
    // only the file this call created is removed, never a name someone else holds
    if (tmp !== undefined) fs.rmSync(tmp, { force: true });
  }
}
