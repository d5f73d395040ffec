// The preload shim (node --require): runs in every Node process and worker thread that smc-run starts.
// At start-up it only arms the lazy hook (src/hook/lazy.ts): nothing costly happens until the program's
// first TCP handle operation, when dist/preload-runtime.js (config, addon, probe, hook) is loaded. It
// imports nothing else (not even node:path or node:fs: each import here is paid by every Node process).
// It must never break the program.
import { isDisabled } from './config';
import { arm, bindingPrototype, isArmed } from './hook/lazy';

function runtime(): typeof import('./hook/activate') {
  // not bundled into this file: its code is parsed only by programs that use TCP
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(`${__dirname}/preload-runtime.js`) as typeof import('./hook/activate');
}

/**
 * The runtime did not load or start (a damaged installation, a Node whose internals differ): one notice,
 * through the same once-per-process-tree notice as every other reason, loaded only now (it needs node:fs);
 * when even that fails, one plain line.
 */
function failed(e: unknown): void {
  const why = (e instanceof Error ? e.message : String(e)).split('\n', 1)[0];
  const message = `SMC runtime failed to load (${why}): running on plain TCP; fix: reinstall smc-run; check: smc-run doctor`;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const notice = require(`${__dirname}/hook/notice.js`) as typeof import('./hook/notice');
    notice.noticeOnce(message, process.env.SMC_RUN_SESSION || undefined);
    return;
  } catch {
    /* the installation is damaged further: write it ourselves */
  }
  try {
    process.stderr.write(`WARN: smc-run[${process.pid}]: ${message}\n`);
  } catch {
    /* stderr closed */
  }
}

function start(): void {
  if (isDisabled()) return;
  const proto = bindingPrototype();
  const go = (): void => {
    try {
      runtime().activate(proto);
    } catch (e) {
      failed(e);
    }
  };
  if (proto && isArmed(proto)) return; // a second copy of the preload in this thread
  // --permission or --pending-deprecation (no binding), or a handle class the wrappers can't patch: start now
  if (!proto || !arm(proto, go)) go();
}

try {
  start();
} catch (e) {
  // last line of defence: report, run the program on TCP
  failed(e);
}
