// smc-run doctor --cmd PATH: which mechanism the launcher would use for a program. bin/smc-run decides it
// (its mechanism() function: the Node shim for node and node scripts, the LD_PRELOAD library for other
// dynamically linked programs, nothing for static, Go, setuid/setgid and (for users other than root) file-capability programs); this asks it, through
// `smc-run --dry-run PATH`, and puts the answer in words.
import { spawnSync } from 'node:child_process';
import { firstLine } from '../native';
import { LAUNCHER_PATH } from '../launcher/spawn';
import type { Check } from './checks';

export type Mechanism = 'node' | 'preload' | 'static' | 'go' | 'setuid' | 'setgid' | 'filecap' | 'other';

/** What `smc-run --dry-run ARGS` prints: the mechanism and the variables the program would get. */
export interface DryRun {
  mechanism: Mechanism;
  env: Record<string, string>;
}

/** Runs the launcher in its dry-run mode (it runs nothing); a refusal (not found, bad option) throws its line. */
export function dryRun(args: string[], env: NodeJS.ProcessEnv = process.env): DryRun {
  const r = spawnSync('/bin/sh', [LAUNCHER_PATH, '--dry-run', ...args], { env, encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new Error(firstLine((r.stderr ?? '').replace(/^smc-run: /, '')) || `the launcher exited with ${r.status ?? r.signal}`);
  const out: DryRun = { mechanism: 'preload', env: {} };
  for (const line of r.stdout.split('\n')) {
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const [key, value] = [line.slice(0, eq), line.slice(eq + 1)];
    if (key === 'mechanism') out.mechanism = value as Mechanism;
    else out.env[key] = value;
  }
  return out;
}

const TEXT: Record<Mechanism, { status: Check['status']; text: string }> = {
  node: { status: 'ok', text: 'a Node program: the Node shim (NODE_OPTIONS --require) makes its TCP sockets SMC' },
  preload: { status: 'ok', text: 'dynamically linked: the LD_PRELOAD library (smc-preload.so) makes its TCP sockets and its children\'s SMC' },
  static: { status: 'warn', text: 'statically linked: LD_PRELOAD cannot reach it, its connections stay TCP' },
  go: { status: 'warn', text: 'a Go program (its socket calls bypass libc): LD_PRELOAD cannot reach it, its connections stay TCP' },
  setuid: { status: 'warn', text: 'setuid: the loader ignores LD_PRELOAD for it, its connections stay TCP' },
  setgid: { status: 'warn', text: 'setgid: the loader ignores LD_PRELOAD for it, its connections stay TCP' },
  filecap: { status: 'warn', text: 'has file capabilities (setcap): run by a user other than root, the loader is in secure mode and ignores LD_PRELOAD, its connections stay TCP' },
  other: { status: 'warn', text: 'not Node and not reached by LD_PRELOAD here (bun, deno, sudo, doas, chroot): see the launcher\'s line when it runs' },
};

export function programCheck(cmd: string): Check {
  let mechanism: Mechanism;
  try {
    mechanism = dryRun([cmd]).mechanism;
  } catch (e) {
    return { id: 'program.mechanism', status: 'fail', message: `${cmd}: ${(e as Error).message}` };
  }
  const { status, text } = TEXT[mechanism] ?? { status: 'warn', text: `the launcher answered "${mechanism}"` };
  return { id: 'program.mechanism', status, message: `${cmd}: ${text}` };
}
