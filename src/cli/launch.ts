// `smc-run [options] <command> [args...]`: sets NODE_OPTIONS and SMC_RUN_* so every Node process the
// command starts (children, npm scripts, cluster workers) loads the shim, then runs the command.
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { ENV, readConfig } from '../config';
import { withPreload } from '../launcher/node-options';
import { runCommand } from '../launcher/spawn';
import { CliError, usageError } from './errors';

export interface LaunchOptions {
  debug: boolean;
  logJson: boolean;
  include: string[];
  exclude: string[];
  proto: string | undefined;
  sndbuf: string | undefined;
  rcvbuf: string | undefined;
}

export const PRELOAD_PATH = path.join(__dirname, '..', 'preload.js');

/** The environment for the command: the caller's, plus the shim and the options as SMC_RUN_*. */
export function launchEnv(base: NodeJS.ProcessEnv, opts: LaunchOptions, session: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  env.NODE_OPTIONS = withPreload(base.NODE_OPTIONS, PRELOAD_PATH);
  env[ENV.session] = session;
  if (opts.debug) env[ENV.debug] = '1';
  if (opts.logJson) env[ENV.logFormat] = 'json';
  // command-line lists extend the ones inherited from the environment
  const join = (name: string, more: string[]): void => {
    const all = [base[name] ?? '', ...more].map((s) => s.trim()).filter((s) => s !== '');
    if (all.length > 0) env[name] = all.join(',');
  };
  join(ENV.include, opts.include);
  join(ENV.exclude, opts.exclude);
  if (opts.proto !== undefined) env[ENV.proto] = opts.proto;
  if (opts.sndbuf !== undefined) env[ENV.sndbuf] = opts.sndbuf;
  if (opts.rcvbuf !== undefined) env[ENV.rcvbuf] = opts.rcvbuf;
  return env;
}

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

