// The preload shim (node --require): runs in every Node process and worker thread that smc-run starts.
// Kept tiny: config from SMC_RUN_* variables, then the hook. It must never break the program.
import { readConfig, ENV } from './config';

function start(): void {
  if (/^(1|true|yes|on)$/i.test(process.env[ENV.disable] ?? '')) return;
  let config;
  try {
    config = readConfig();
  } catch (e) {
    process.stderr.write(`smc-run: ignoring SMC: ${(e as Error).message}\n`);
    return;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require('./hook/enable') as typeof import('./hook/enable')).enableFromConfig(config);
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
