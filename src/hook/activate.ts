// The shim's real start, bundled apart from the preload (dist/preload-runtime.js) and loaded at the
// program's first TCP handle operation: configuration, addon, probe, hook.
import { readConfig } from '../config';
import { enableFromConfig } from './enable';

export function activate(prototype?: Record<string | symbol, unknown>): void {
  let config;
  try {
    config = readConfig();
  } catch (e) {
    process.stderr.write(`smc-run: ignoring SMC: ${(e as Error).message}\n`);
    return;
  }
  enableFromConfig(config, prototype);
}
