// One namespace handle per command (src/netns.ts): a --target PID is opened once as an fd, every later step
// enters that fd, and a target that exits, is a zombie, or lives outside the caller's PID namespace is one
// clear line. Needs no SMC: namespaces only (unshare from util-linux, as root, on any kernel with NET_NS).
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openNetns, TargetError, withNetns, withPinnedNetns } from '../../src/netns';
import { processInOwnNetns } from '../helpers/netns';
import { BIN, run } from '../helpers/run';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

const exited = (c: ChildProcess): Promise<void> => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));

function thrown(fn: () => unknown): TargetError {
  try {
    fn();
  } catch (e) {
    return e as TargetError;
  }
  throw new Error('did not throw');
}

describe('the namespace handle of a command', () => {
  it('keeps the namespace of --target PID after the process exits, and says that it exited', async () => {
    const child = await processInOwnNetns(children);
    const theirs = fs.statSync(`/proc/${child.pid}/ns/net`).ino;
    const ns = openNetns({ target: child.pid })!;
    try {
      expect(ns.inode).toBe(theirs);
      expect(fs.statSync(ns.path).ino).toBe(theirs);
      expect(ns.label).toBe(`/proc/${child.pid}/ns/net`);
      expect(() => ns.checkTargetAlive()).not.toThrow();
      child.kill('SIGKILL');
      await exited(child);
      // the fd still leads to the very namespace the command started with, never to a re-resolved one
      expect(fs.statSync(ns.path).ino).toBe(theirs);
      const e = thrown(() => ns.checkTargetAlive());
      expect(e.code).toBe('ESRCH');
      expect(e.message).toBe(`PID ${child.pid} exited while the command ran`);
    } finally {
      ns.close();
    }
    // closed: the fd number no longer leads there
    expect(fs.existsSync(ns.path) && fs.statSync(ns.path).ino === theirs).toBe(false);
  });

  it('the steps of one command share its handle: a pinned target is never opened again, nor closed by a step', async () => {
    const child = await processInOwnNetns(children);
    const theirs = fs.statSync(`/proc/${child.pid}/ns/net`).ino;
    const seen = withPinnedNetns({ target: child.pid }, (t) => {
      const first = withNetns(t, (ns) => ns!.path);
      // the step closed its view; the command's handle is still open and still the same namespace
      const second = withNetns(t, (ns) => ({ path: ns!.path, ino: fs.statSync(ns!.path).ino }));
      return { first, ...second };
    });
    expect(seen.first).toBe(seen.path);
    expect(seen.ino).toBe(theirs);
  });

  it('a zombie --target (exited, not yet reaped) has no namespace: ESRCH, one line', async () => {
    // a parent that never reaps its exited child (a shell may reap it before exec: seen once in CI)
    const parent = spawn('python3', ['-c', 'import os, time\npid = os.fork()\nif pid == 0: os._exit(0)\nprint(pid, flush=True)\ntime.sleep(60)'], { stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(parent);
    const zombie = Number(await new Promise<string>((r) => parent.stdout!.once('data', (d) => r(String(d)))));
    for (let i = 0; i < 200 && !/\) Z /.test(fs.readFileSync(`/proc/${zombie}/stat`, 'utf8')); i++) await new Promise((r) => setTimeout(r, 25));
    const e = thrown(() => openNetns({ target: zombie }));
    expect(e.code).toBe('ESRCH');
    expect(e.message).toBe(`no process with PID ${zombie}`);
  });

  it('--netns of a file that is no namespace is refused before anything runs', () => {
    const e = thrown(() => withNetns({ netns: '/proc/self/ns' }, () => 'ran'));
    expect(e.code).toBe('EINVAL');
    expect(e.message).toBe('/proc/self/ns is not a network namespace');
  });

  it('--target and --netns together are a usage error, before either is opened', () => {
    const e = thrown(() => openNetns({ target: process.pid, netns: 'x' }));
    expect(e.code).toBe('EUSAGE');
  });

  it('a --target outside the caller\'s PID namespace: one line that says where the caller is, exit 1', async () => {
    // smc-run inside a PID namespace of its own, given a PID of ours (which it cannot see)
    const r = await run('unshare', ['--pid', '--fork', '--mount-proc', BIN, 'sysctl', 'list', '--target', String(process.pid), '--json']);
    expect(r.code, r.stderr).toBe(1);
    const err = (JSON.parse(r.stdout) as { error: { code: string; message: string } }).error;
    expect(err.code).toBe('ESRCH');
    expect(err.message).toBe(`no process with PID ${process.pid} in this PID namespace (smc-run runs in a PID namespace of its own: give the PID as seen from here)`);
    const plain = await run('unshare', ['--pid', '--fork', '--mount-proc', BIN, 'stats', 'sockets', '--target', String(process.pid)]);
    expect(plain.code).toBe(1);
    expect(plain.stderr.trim().split('\n')).toHaveLength(1);
    expect(plain.stderr).toContain('in this PID namespace');
  });
});
