// The Node side of the smc-run command: the tool subcommands (stats, sysctl, ...), and --help / --version
// of the launcher. Launching a program is bin/smc-run's sh part (it sets the environment and execs the
// program); reached here only as `node bin/smc-run CMD`, it goes through that same sh part.
import type { Argv } from 'yargs';
import { CliError, reportError, toCliError, usageError } from './errors';
import { runThroughShell } from '../launcher/spawn';
import { SUBCOMMANDS } from './commands';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const VERSION = (require('../../package.json') as { version: string }).version;

type YargsFactory = (args: string[]) => Argv;

async function loadYargs(): Promise<YargsFactory> {
  // yargs 18 is ESM-only; this package is CommonJS (the preload shim must be), hence import().
  const mod = (await import('yargs')) as unknown as { default: YargsFactory };
  return mod.default;
}

/** yargs' own validation errors (YError) are usage errors; errors thrown by handlers pass through. */
function failHandler(msg: string | undefined, err: Error | undefined): never {
  if (err && err.name !== 'YError') throw err;
  throw usageError(msg ?? err?.message ?? 'invalid arguments');
}

const LAUNCH_EXAMPLES: [string, string][] = [
  ['smc-run node server.js', 'every TCP socket of server.js (and its children) over SMC'],
  ['smc-run -d npm start', 'with a debug line per socket'],
  ['smc-run --exclude 10.0.0.0/8:5432 node app.js', 'keep the database connection on TCP'],
  ['smc-run -t 1M -r 1M node bulk.js', '1 MiB SMC send/receive buffers (needs net.core.wmem_max/rmem_max >= 1M)'],
  ['smc-run --dry-run redis-server', 'which mechanism reaches redis-server (here the LD_PRELOAD library) and what it would get'],
  ['smc-run stats sockets --pid 1234', 'SMC mode and fallback reason of each connection of a process'],
];

async function runLauncher(yargs: YargsFactory, argv: string[]): Promise<number> {
  const y = yargs(argv)
    .scriptName('smc-run')
    .help(false)
    .version(false)
    .usage('$0 [options] <command> [args...]\n$0 <stats|sysctl|ueid|seid|hs-limit|doctor|enable|disable|status|oci-hook> ...\n\nRun a command with every TCP socket of its Node.js processes opened as an SMC socket (AF_SMC), falling back to TCP visibly when SMC is impossible.')
    .parserConfiguration({ 'halt-at-non-option': true, 'parse-positional-numbers': false, 'boolean-negation': false })
    .option('debug', { alias: 'd', type: 'boolean', default: false, describe: 'log each socket and decision to stderr' })
    .option('log-json', { type: 'boolean', default: false, describe: 'log as JSON lines instead of text' })
    .option('include', { type: 'string', describe: 'only these CIDR[:port] use SMC (repeatable)' })
    .option('exclude', { type: 'string', describe: 'these CIDR[:port] stay TCP; wins over --include (repeatable)' })
    .option('proto', { choices: ['af_smc', 'ipproto', 'auto'], describe: 'AF_SMC sockets, IPPROTO_SMC (6.11+), or AF_SMC falling back to IPPROTO_SMC (default)' })
    .option('sndbuf', { alias: 't', type: 'string', describe: 'SO_SNDBUF for each SMC socket (256k, 1M, ... at most 1073741823 bytes)' })
    .option('rcvbuf', { alias: 'r', type: 'string', describe: 'SO_RCVBUF for each SMC socket (256k, 1M, ... at most 1073741823 bytes)' })
    .option('no-tcp-retry', { type: 'boolean', describe: 'do not retry a connect whose SMC handshake failed over plain TCP (env SMC_RUN_TCP_RETRY=0)' })
    .option('dry-run', { type: 'boolean', describe: 'run nothing: print how the command would be reached (mechanism=node|preload|static|go|setuid|setgid|other) and the variables it would get' })
    .option('help', { alias: 'h', type: 'boolean', describe: 'show this help' })
    .option('version', { alias: 'V', type: 'boolean', describe: 'show the version' })
    .strict()
    .exitProcess(false)
    .fail(failHandler)
    .epilog('Environment: SMC_RUN_DISABLE=1 turns the shim off for a process tree; SMC_RUN_DEBUG=1 as -d.\nTool commands: smc-run stats --help, smc-run sysctl --help, ...');
  for (const [cmd, desc] of LAUNCH_EXAMPLES) y.example(cmd, desc);
  const args = await y.parseAsync();
  if (args.help) {
    process.stdout.write(`${await y.getHelp()}\n`);
    return 0;
  }
  if (args.version) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  return runThroughShell(argv);
}

async function runSubcommand(yargs: YargsFactory, argv: string[]): Promise<number> {
  let exitCode = 0;
  const y = yargs(argv)
    .scriptName('smc-run')
    .parserConfiguration({ 'parse-positional-numbers': false })
    .strict()
    .exitProcess(false)
    .fail(failHandler)
    .help()
    .alias('help', 'h')
    .version(false)
    .demandCommand(1, 'name a subcommand (see --help)');
  for (const register of new Set(Object.values(SUBCOMMANDS))) register(y, (code) => (exitCode = code));
  const args = await y.parseAsync();
  if (args.help) return 0;
  return exitCode;
}

export async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  try {
    const first = argv[0];
    if (first === undefined || !['-h', '--help', '-V', '--version'].includes(first) && !Object.hasOwn(SUBCOMMANDS, first)) {
      // a program to launch (options and all): the sh launcher parses and checks them
      return await runThroughShell(argv);
    }
    const yargs = await loadYargs();
    if (first !== undefined && Object.hasOwn(SUBCOMMANDS, first)) return await runSubcommand(yargs, argv);
    return await runLauncher(yargs, argv);
  } catch (e) {
    return reportError(toCliError(e), json);
  }
}

export { CliError };
