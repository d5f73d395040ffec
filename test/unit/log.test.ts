// The shim's own log writer: the lines pino and pino-pretty wrote before, without loading them.
import { describe, expect, it } from 'vitest';
import { formatLine } from '../../src/log';

describe('formatLine', () => {
  it('text: LEVEL: smc-run[PID]: message, fields as JSON after it', () => {
    expect(formatLine('warn', 'no SMC', undefined, 'pretty', 42, 0)).toBe('WARN: smc-run[42]: no SMC\n');
    expect(formatLine('debug', 'sndbuf', { fd: 3 }, 'pretty', 42, 0)).toBe('DEBUG: smc-run[42]: sndbuf {"fd":3}\n');
  });

  it("json: pino's field order and numeric levels", () => {
    expect(formatLine('warn', 'no SMC', undefined, 'json', 42, 7)).toBe('{"level":40,"time":7,"pid":42,"name":"smc-run","msg":"no SMC"}\n');
    expect(formatLine('debug', 'x', { fd: 3 }, 'json', 42, 7)).toBe('{"level":20,"time":7,"pid":42,"name":"smc-run","fd":3,"msg":"x"}\n');
  });
});
