// The hooks.d file that makes podman and CRI-O run `smc-run oci-hook` (containers-common's oci-hooks(5),
// format 1.0.0): for containers annotated io.smc-run/enable=true (or erdma-controller's annotation), at
// createRuntime and poststop. The runtime gives a hook a bare environment: the file names this package's
// launcher by its absolute path and puts the running Node's directory first in PATH, and hands it the
// installer's XDG_CACHE_HOME when one is set, so that the hook's records (src/oci/records.ts) are where the
// installing administrator's `smc-run status` looks.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { replaceFileAtomically } from '../atomic-file';
import { PACKAGE_ROOT } from '../package-root';
import { WHEN_ANNOTATIONS } from './annotations';

/** Where podman and CRI-O read hooks an administrator adds (/usr/share/containers/oci/hooks.d is the packages'). */
export const HOOKS_DIR = '/etc/containers/oci/hooks.d';
export const HOOK_FILE = 'smc-run.json';

export function hookDefinition(launcher = path.join(PACKAGE_ROOT, 'bin', 'smc-run'), nodeDir = path.dirname(process.execPath)): object {
  return {
    version: '1.0.0',
    hook: {
      path: launcher,
      args: ['smc-run', 'oci-hook'],
      env: [`PATH=${nodeDir}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`, ...(process.env.XDG_CACHE_HOME ? [`XDG_CACHE_HOME=${process.env.XDG_CACHE_HOME}`] : [])],
      // a hook that outlives this is killed by the runtime; the switch takes well under a second
      timeout: 30,
    },
    when: { annotations: WHEN_ANNOTATIONS },
    stages: ['createRuntime', 'poststop'],
  };
}

/**
 * Writes the hooks.d file. launcher/nodeDir: where the runtime finds smc-run's launcher and node, as the
 * host sees them (the node kit installs a copy on the host from a container: deploy/node-install.sh);
 * default this package's launcher and the running node.
 */
export function installHook(dir = HOOKS_DIR, launcher?: string, nodeDir?: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, HOOK_FILE);
  replaceFileAtomically(file, JSON.stringify(hookDefinition(launcher, nodeDir), null, 2) + '\n');
  fs.chmodSync(file, 0o644); // the runtimes read it as root; others may read what it runs
  return file;
}

/** Removes the file; whether it was there. */
export function uninstallHook(dir = HOOKS_DIR): boolean {
  const file = path.join(dir, HOOK_FILE);
  const was = fs.existsSync(file);
  fs.rmSync(file, { force: true });
  return was;
}
