// smc-run oci-hook                    the hook itself: the OCI state on stdin (run by the runtime)
// smc-run oci-hook install [--dir D]  writes the hooks.d file podman and CRI-O read (src/oci/install.ts)
// smc-run oci-hook uninstall [--dir D]
// The hook never throws out of here: whatever happens it exits as src/oci/hook.ts decided (0 unless the
// container asked to fail), with at most one line on stderr, which the runtime logs.
import * as fs from 'node:fs';
import type { Argv } from 'yargs';
import { parseState, runHook } from '../oci/hook';
import { HOOKS_DIR, installHook, uninstallHook } from '../oci/install';
import { logLine } from '../oci/records';
import type { RegisterCommand } from './commands';
import { printJson, withJson } from './options';

/** The hook's one line: on stderr (CRI-O logs it) and in hook.log beside its records (crun drops it). */
function say(id: string, message: string): void {
  const line = `smc-run oci-hook: container ${id.slice(0, 12)}: ${message}`;
  process.stderr.write(`${line}\n`);
  logLine(line);
}

function hook(setExit: (code: number) => void): void {
  let id = '?';
  try {
    const state = parseState(fs.readFileSync(0, 'utf8'));
    id = state.id;
    const out = runHook(state);
    if (out.message !== undefined) say(id, out.message);
    setExit(out.exit);
  } catch (e) {
    // a bug or an unreadable stdin: the container is not this hook's to stop
    say(id, `${(e as Error).message}; the container runs on TCP`);
    setExit(0);
  }
}

export const registerOciHook: RegisterCommand = (y: Argv, setExit) => {
  y.command('oci-hook [action]', 'the OCI runtime hook for podman and CRI-O (annotation io.smc-run/enable=true); install|uninstall its hooks.d file', (c) =>
    withJson(c)
      .positional('action', { choices: ['install', 'uninstall'] as const, describe: 'without one: run as the hook (the OCI state on stdin)' })
      .option('dir', { type: 'string', default: HOOKS_DIR, describe: 'the hooks.d directory' })
      .option('launcher', { type: 'string', describe: 'install: the smc-run launcher as the runtime will find it (default: this package\'s bin/smc-run)' })
      .option('node-dir', { type: 'string', describe: 'install: the directory of the node the launcher runs (default: the running node\'s)' }),
  (a) => {
    const args = a as unknown as { action?: 'install' | 'uninstall'; dir: string; json: boolean; launcher?: string; nodeDir?: string };
    if (args.action === undefined) return hook(setExit);
    if (args.action === 'install') {
      const file = installHook(args.dir, args.launcher, args.nodeDir);
      if (args.json) printJson({ installed: file });
      else process.stdout.write(`installed: ${file} (podman and CRI-O run the hook for containers annotated io.smc-run/enable=true)\n`);
      return;
    }
    const was = uninstallHook(args.dir);
    if (args.json) printJson({ removed: was, dir: args.dir });
    else process.stdout.write(was ? `removed: the smc-run hook from ${args.dir}\n` : `not installed in ${args.dir}\n`);
  });
};
