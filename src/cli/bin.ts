// What bin/smc-run execs for the tool commands, --help and --version: the full CLI in one Node process.
import { main } from './main';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`smc-run: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
