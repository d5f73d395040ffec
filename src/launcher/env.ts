// The environment a launched command gets: the caller's, plus the shim in NODE_OPTIONS and the launcher
// options as SMC_RUN_* variables (so every Node process below it reads the same configuration).
import * as path from 'node:path';
import { ENV } from '../config';
import { PACKAGE_ROOT } from '../package-root';
import { withPreload } from './node-options';

export interface LaunchOptions {
  debug: boolean;
  logJson: boolean;
  include: string[];
  exclude: string[];
  proto: string | undefined;
  sndbuf: string | undefined;
  rcvbuf: string | undefined;
}

export const PRELOAD_PATH = path.join(PACKAGE_ROOT, 'dist', 'preload.js');

/** `smc-run CMD` with no options. */
export const DEFAULT_LAUNCH_OPTIONS: Readonly<LaunchOptions> = {
  debug: false, logJson: false, include: [], exclude: [], proto: undefined, sndbuf: undefined, rcvbuf: undefined,
};

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
