// Run by bin/smc-run only when SMC_RUN_* values are set: checks them with the shim's own parser, so a
// malformed address list or size is a usage error (one line, exit 2) before the program starts.
import { ConfigError, readConfig } from '../config';

try {
  readConfig(process.env);
} catch (e) {
  process.stderr.write(`smc-run: ${e instanceof ConfigError ? e.message : String(e)}\n`);
  process.exitCode = 2;
}
