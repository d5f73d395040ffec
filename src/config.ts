// Configuration shared by the launcher and the preload shim. The launcher writes SMC_RUN_* variables so
// every child Node process inherits them; the shim reads them back here. Parsing is pure and tested.
import { parseRules, type Rule } from './policy/rules';
import { parseSocketBufferSize } from './units';

export type SocketFamilyMode = 'smc' | 'inet';
export type ProtoMode = 'af_smc' | 'ipproto' | 'auto';
export type LogFormat = 'pretty' | 'json';

export interface ShimConfig {
  disabled: boolean;
  debug: boolean;
  logFormat: LogFormat;
  /** 'inet' = test mode: the addon creates plain AF_INET/AF_INET6 sockets (for kernels without SMC) */
  socketFamily: SocketFamilyMode;
  proto: ProtoMode;
  include: Rule[];
  exclude: Rule[];
  sndbuf: number | undefined;
  rcvbuf: number | undefined;
  /** id shared by one launcher's process tree: the fallback notice is printed once per session */
  session: string | undefined;
  /** retry a client connect whose SMC handshake failed once over plain TCP (default on) */
  tcpRetry: boolean;
  /**
   * TEST ONLY (honoured only with socketFamily 'inet'): an errno name; the first completion of every hooked
   * connect is treated as a retryable failure with this code (a success is turned into it), so host tests
   * can drive the retry machinery without an SMC kernel. Never set in production.
   */
  testConnectFault: string | undefined;
}

export const ENV = {
  disable: 'SMC_RUN_DISABLE',
  debug: 'SMC_RUN_DEBUG',
  logFormat: 'SMC_RUN_LOG_FORMAT',
  socketFamily: 'SMC_RUN_SOCKET_FAMILY',
  proto: 'SMC_RUN_PROTO',
  include: 'SMC_RUN_INCLUDE',
  exclude: 'SMC_RUN_EXCLUDE',
  sndbuf: 'SMC_RUN_SNDBUF',
  rcvbuf: 'SMC_RUN_RCVBUF',
  session: 'SMC_RUN_SESSION',
  tcpRetry: 'SMC_RUN_TCP_RETRY',
  testConnectFault: 'SMC_RUN_TEST_CONNECT_FAULT',
} as const;

const falsy = (v: string | undefined): boolean => v !== undefined && /^(0|false|no|off)$/i.test(v.trim());

export class ConfigError extends Error {
  readonly code = 'EINVALCONFIG';
}

/** How every SMC_RUN_* switch is read: 1, true, yes, on (any case, surrounding blanks ignored). */
export const truthy = (v: string | undefined): boolean => v !== undefined && /^(1|true|yes|on)$/i.test(v.trim());

/** SMC_RUN_DISABLE, read here only (the preload, enableSmc and doctor ask this). */
export const isDisabled = (env: NodeJS.ProcessEnv = process.env): boolean => truthy(env[ENV.disable]);

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[], dflt: T): T {
  if (value === undefined || value === '') return dflt;
  const v = value.trim().toLowerCase();
  if ((allowed as readonly string[]).includes(v)) return v as T;
  throw new ConfigError(`${name}=${value}: expected one of ${allowed.join(', ')}`);
}

function optionalBufferSize(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  try {
    return parseSocketBufferSize(value);
  } catch (e) {
    throw new ConfigError(`${name}: ${(e as Error).message}`);
  }
}

function testConnectFault(env: NodeJS.ProcessEnv): string | undefined {
  const v = env[ENV.testConnectFault]?.trim();
  if (!v) return undefined;
  if (!/^E[A-Z0-9]+$/.test(v)) throw new ConfigError(`${ENV.testConnectFault}=${v}: expected an errno name (ETIMEDOUT, ...)`);
  return v;
}

/** Reads the configuration from an environment; throws ConfigError on a malformed value. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): ShimConfig {
  const rules = (name: string): Rule[] => {
    try {
      return parseRules(env[name] ?? '');
    } catch (e) {
      throw new ConfigError(`${name}: ${(e as Error).message}`);
    }
  };
  return {
    disabled: isDisabled(env),
    debug: truthy(env[ENV.debug]),
    logFormat: oneOf(ENV.logFormat, env[ENV.logFormat], ['pretty', 'json'] as const, 'pretty'),
    socketFamily: oneOf(ENV.socketFamily, env[ENV.socketFamily], ['smc', 'inet'] as const, 'smc'),
    proto: oneOf(ENV.proto, env[ENV.proto], ['af_smc', 'ipproto', 'auto'] as const, 'auto'),
    include: rules(ENV.include),
    exclude: rules(ENV.exclude),
    sndbuf: optionalBufferSize(ENV.sndbuf, env[ENV.sndbuf]),
    rcvbuf: optionalBufferSize(ENV.rcvbuf, env[ENV.rcvbuf]),
    session: env[ENV.session] || undefined,
    tcpRetry: !falsy(env[ENV.tcpRetry]),
    testConnectFault: testConnectFault(env),
  };
}
