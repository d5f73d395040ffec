// Logging through pino, to stderr only (stdout belongs to the program). pino and pino-pretty are loaded
// on the first message, not at start-up: the preload shim runs in every Node process.
import type { Logger } from 'pino';
import type { LogFormat } from './config';

let logger: Logger | undefined;
let options: { debug: boolean; format: LogFormat } = { debug: false, format: 'pretty' };

export function configureLog(debug: boolean, format: LogFormat): void {
  options = { debug, format };
  logger = undefined;
}

export function isDebug(): boolean {
  return options.debug;
}

function get(): Logger {
  if (logger) return logger;
  /* eslint-disable @typescript-eslint/no-require-imports */
  const pino = require('pino') as typeof import('pino');
  const level = options.debug ? 'debug' : 'info';
  const base = { pid: process.pid };
  if (options.format === 'json') {
    logger = pino.pino({ name: 'smc-run', level, base }, pino.destination({ fd: 2, sync: true }));
  } else {
    const { PinoPretty } = require('pino-pretty') as typeof import('pino-pretty');
    const stream = PinoPretty({
      destination: 2,
      sync: true,
      colorize: false,
      singleLine: true,
      ignore: 'time,hostname,name,pid',
      messageFormat: 'smc-run[{pid}]: {msg}',
    });
    logger = pino.pino({ name: 'smc-run', level, base }, stream);
  }
  /* eslint-enable @typescript-eslint/no-require-imports */
  return logger;
}

export const log = {
  debug(msg: string, fields?: object): void {
    if (options.debug) get().debug(fields ?? {}, msg);
  },
  info(msg: string, fields?: object): void {
    get().info(fields ?? {}, msg);
  },
  warn(msg: string, fields?: object): void {
    get().warn(fields ?? {}, msg);
  },
  error(msg: string, fields?: object): void {
    get().error(fields ?? {}, msg);
  },
};
