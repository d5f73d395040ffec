// The preload shim (node --require): runs in every Node process and worker thread that smc-run starts.
// At start-up it only arms the lazy hook (src/hook/lazy.ts): nothing costly happens until the program's
// first TCP handle operation, when dist/preload-runtime.js (config, addon, probe, hook) is loaded. It
// imports nothing else (not even node:path or node:fs: each import here is paid by every Node process).
// It must never break the program.
import { isDisabled } from './config';
import { arm, bindingPrototype } from './hook/lazy';

function runtime(): typeof import('./hook/activate') {
  // not bundled into this file: its code is parsed only by programs that use TCP
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(`${__dirname}/preload-runtime.js`) as typeof import('./hook/activate');
}

function start(): void {
  if (isDisabled()) return;
  const proto = bindingPrototype();
  if (proto) arm(proto, () => runtime().activate(proto));
  else runtime().activate(); // --permission or --pending-deprecation: no lazy path, start now
}

try {
  start();
} catch (e) {
  // last line of defence: report, run the program on TCP
  try {
    process.stderr.write(`smc-run: hook not installed, running on TCP: ${(e as Error).message}\n`);
  } catch {
    /* stderr closed */
  }
}
