// Tables print text that other users control (a process's name, /proc/PID/comm, which any process sets for
// itself) into the terminal of whoever runs smc-run, often root: control characters are shown, never sent.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { renderTable, type Column } from '../../src/cli/table';
import { socketInodesOf, socketOwners } from '../../src/proc/owners';

const COLUMNS: Column<{ name: string; n: number }>[] = [
  { header: 'Process', value: (r) => r.name },
  { header: 'N', value: (r) => String(r.n), align: 'right' },
];

describe('renderTable', () => {
  it('shows control characters as \\xNN: no escape sequence, line break or carriage return reaches the terminal', () => {
    const out = renderTable([{ name: '\x1b]0;owned\x07\x1b[2Jx\ny\rz\x9b1m\u202eevil', n: 1 }, { name: 'node', n: 22 }], COLUMNS);
    expect(out).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]/);
    expect(out.split('\n')).toHaveLength(4);
    expect(out).toContain('\\x1b]0;owned\\x07\\x1b[2Jx\\x0ay\\x0dz\\x9b1m\\u202eevil');
    // widths count what is shown
    expect(out.split('\n')[2]).toBe(`node${' '.repeat('\\x1b]0;owned\\x07\\x1b[2Jx\\x0ay\\x0dz\\x9b1m\\u202eevil'.length - 4)}  22`);
  });

  it('a process that names itself with escapes: its name reaches the table as visible text', async () => {
    // any user's process can do this (prctl PR_SET_NAME, or writing its own /proc/self/comm)
    const script = "require('fs').writeFileSync('/proc/self/comm','\\x1b[2J\\x1b]0;x\\x07');const s=require('net').createServer().listen(0,'127.0.0.1',()=>console.log('up'))";
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await once(child.stdout, 'data');
      const inodes = socketInodesOf(child.pid!);
      const owners = socketOwners(inodes);
      const name = [...owners.values()].flat().find((o) => o.pid === child.pid)!.command;
      expect(name).toContain('\x1b[2J');
      const out = renderTable([{ name, n: child.pid! }], COLUMNS);
      expect(out).not.toContain('\x1b');
      expect(out).toContain('\\x1b[2J\\x1b]0;x\\x07');
    } finally {
      child.kill('SIGKILL');
    }
  });
});
