// `smc-run [options] <command> [args...]`: sets NODE_OPTIONS and SMC_RUN_* so every Node process the
// command starts (children, npm scripts, cluster workers) loads the shim, then runs the command.
import { randomBytes } from 'node:crypto';
import { readConfig } from '../config';
import { launchEnv, type LaunchOptions } from '../launcher/env';
import { runCommand } from '../launcher/spawn';
import { CliError, usageError } from './errors';

export async function launch(command: string[], opts: LaunchOptions): Promise<number> {
  const [cmd, ...args] = command;
  if (cmd === undefined) throw usageError('no command given (usage: smc-run [options] <command> [args...]; see smc-run --help)');
  const session = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const env = launchEnv(process.env, opts, session);
  try {
    readConfig(env); // validate once here: a malformed option is a usage error, not a silent TCP run
  } catch (e) {
    throw usageError((e as Error).message);
  }
  const result = await runCommand(cmd, args, env, session);
  if (typeof result === 'number') return result;
  throw new CliError(result.exitCode === 127 ? 'ENOENT' : 'EACCES', result.message, result.exitCode);
}

