// The shim's log lines, to stderr only (stdout belongs to the program). A tiny synchronous writer, not
// pino: the shim runs inside every Node process, and loading pino there delays the first line by tens of
// milliseconds (bench/REPORT.md, "Hook overhead on the host"). The lines are the ones pino/pino-pretty wrote before (tests and scripts read them):
//   text: `WARN: smc-run[PID]: message {"fd":3}`
//   json: {"level":40,"time":MS,"pid":PID,"name":"smc-run","fd":3,"msg":"message"}
import * as fs from 'node:fs';
import type { LogFormat } from './config';

const LEVELS = { debug: 20, info: 30, warn: 40, error: 50 } as const;
type Level = keyof typeof LEVELS;

let options: { debug: boolean; format: LogFormat } = { debug: false, format: 'pretty' };

export function configureLog(debug: boolean, format: LogFormat): void {
  options = { debug, format };
}

export function isDebug(): boolean {
  return options.debug;
}

/** One log line as text (pino-pretty's single-line layout) or JSON (pino's). */
export function formatLine(level: Level, msg: string, fields: object | undefined, format: LogFormat, pid = process.pid, time = Date.now()): string {
  const extra = fields && Object.keys(fields).length > 0 ? fields : undefined;
  if (format === 'json') return `${JSON.stringify({ level: LEVELS[level], time, pid, name: 'smc-run', ...extra, msg })}\n`;
  return `${level.toUpperCase()}: smc-run[${pid}]: ${msg}${extra ? ` ${JSON.stringify(extra)}` : ''}\n`;
}

function write(level: Level, msg: string, fields: object | undefined): void {
  try {
    fs.writeSync(2, formatLine(level, msg, fields, options.format));
  } catch {
    // stderr closed or full: the shim never throws into the program for a log line
  }
}

export const log = {
  debug(msg: string, fields?: object): void {
    if (options.debug) write('debug', msg, fields);
  },
  info(msg: string, fields?: object): void {
    write('info', msg, fields);
  },
  warn(msg: string, fields?: object): void {
    write('warn', msg, fields);
  },
  error(msg: string, fields?: object): void {
    write('error', msg, fields);
  },
};
