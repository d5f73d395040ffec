// The LD_PRELOAD library (native/preload/smc-preload.c) on this host, in test mode (SMC_RUN_SOCKET_FAMILY=inet:
// the "SMC" socket is a fresh inet socket, so the policy and the retry run without an SMC kernel). A new
// socket under the same fd number (only the TCP retry makes one) shows as a new inode (sockprobe:
// "replaced"); the policy's decision shows in the debug lines (in guests: sock_diag).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dryRun } from '../../src/doctor/program';
import { PATHS, buildFixture, sockprobeFixture, connectProbe, debugLines, echoOf, probeOf, startServer } from '../helpers/preload-lib';
import { BIN, REPO, run, smcRun } from '../helpers/run';

const TEST = { SMC_RUN_SOCKET_FAMILY: 'inet' };
const LIB = path.join(REPO, 'build', 'Release', 'smc-preload.so');
const lines = (s: string): string[] => s.split('\n').filter((l) => l.trim() !== '');

describe('LD_PRELOAD library (test mode)', () => {
  const fx = sockprobeFixture();

  for (const { name, args: rule, replaced } of PATHS) {
    it(`${name}: a blocking client and a listener keep fd, flags and options; data intact`, async () => {
      const srv = await startServer(fx.probe, ['-d', ...rule], TEST);
      const c = await connectProbe(fx.probe, ['-d', ...rule], TEST, '127.0.0.1', srv.port, ['bytes=300000']);
      await srv.done;
      expect(c.code, c.stderr).toBe(0);
      expect(probeOf(c)).toMatchObject({ replaced, rc: 0, errno: '', fd: 3, nonblock: false, cloexec: true, keepalive: 1, nodelay: 1, sndbuf: 131072 });
      expect(echoOf(c)).toEqual({ echo: true, bytes: 300000 });
      expect(debugLines(c.stderr)).toEqual([`connect 127.0.0.1:${srv.port} on inet (test mode) fd 3`]);
      const listen = probeOf({ ...srv.out(), code: 0, signal: null }, 'listen');
      expect(listen).toMatchObject({ replaced, rc: 0, reuseaddr: 1, cloexec: true, localPort: srv.port });
      expect(debugLines(srv.out().stderr)).toEqual([`listen 127.0.0.1:${srv.port} on inet (test mode) fd 3`]);
    });

    it(`${name}: options set through another fd number of the socket, or by the parent after a fork`, async () => {
      for (const how of ['dupset', 'forkset']) {
        const srv = await startServer(fx.probe, rule, TEST);
        const c = await connectProbe(fx.probe, rule, TEST, '127.0.0.1', srv.port, [how]);
        await srv.done;
        expect(c.code, `${how}: ${c.stderr}`).toBe(0);
        expect(probeOf(c), how).toMatchObject({ replaced, rc: 0, keepalive: 1, nodelay: 1, sndbuf: 131072 });
        expect(echoOf(c)?.echo, how).toBe(true);
      }
    });

    it(`${name}: O_NONBLOCK kept for a non-blocking connect (EINPROGRESS, then poll and SO_ERROR)`, async () => {
      const srv = await startServer(fx.probe, rule, TEST);
      const c = await connectProbe(fx.probe, ['-d', ...rule], TEST, '127.0.0.1', srv.port, ['nonblock']);
      await srv.done;
      expect(probeOf(c)).toMatchObject({ replaced, rc: 0, errno: '', nonblock: true, cloexec: true, keepalive: 1, nodelay: 1 });
      expect(echoOf(c)?.echo).toBe(true);
      expect(debugLines(c.stderr)).toEqual([`connect 127.0.0.1:${srv.port} on inet (test mode) fd 3`]);
    });

    it(`${name}: the socket stays bound where the program bound it`, async () => {
      const srv = await startServer(fx.probe, rule, TEST);
      const c = await connectProbe(fx.probe, rule, TEST, '127.0.0.1', srv.port, ['bind']);
      await srv.done;
      const p = probeOf(c);
      expect(p).toMatchObject({ replaced, rc: 0 });
      expect(p?.boundPort).toBeGreaterThan(0);
      expect(p?.localPort).toBe(p?.boundPort);
      expect(echoOf(c)?.echo).toBe(true);
    });

    it(`${name}: IPv6, the listener keeps IPV6_V6ONLY`, async () => {
      const srv = await startServer(fx.probe, rule, TEST, '::1', 1, ['v6only']);
      expect(probeOf({ ...srv.out(), code: 0, signal: null }, 'listen')).toMatchObject({ replaced, v6only: 1 });
      const c = await connectProbe(fx.probe, ['-d', ...rule], TEST, '::1', srv.port);
      await srv.done;
      expect(probeOf(c)).toMatchObject({ replaced, rc: 0 });
      expect(debugLines(c.stderr)).toEqual([`connect ::1:${srv.port} on inet (test mode) fd 3`]);
    });

    it(`${name}: errno kept, ECONNREFUSED from a refused connect, untouched on success`, async () => {
      const srv = await startServer(fx.probe, rule, TEST, '127.0.0.1', 0);
      await srv.done; // port now closed
      const c = await connectProbe(fx.probe, rule, TEST, '127.0.0.1', srv.port);
      expect(c.code, c.stderr).toBe(0); // sockprobe exits 3 when a successful connect changed errno
      expect(probeOf(c)).toMatchObject({ replaced, rc: -1, errno: 'ECONNREFUSED' });
    });

    it(`${name}: TCP retry, a blocking connect whose SMC handshake failed is connected again over TCP, once noticed`, async () => {
      const srv = await startServer(fx.probe, rule, TEST, '127.0.0.1', 2);
      const env = { ...TEST, SMC_RUN_TEST_CONNECT_FAULT: 'ECONNRESET' };
      const c = await connectProbe(fx.probe, ['-d', ...rule], env, '127.0.0.1', srv.port);
      // the retry always puts a new (TCP) socket under the fd
      expect(probeOf(c)).toMatchObject({ replaced: true, rc: 0, errno: '', fd: 3, cloexec: true, keepalive: 1, nodelay: 1, sndbuf: 131072 });
      expect(echoOf(c)?.echo).toBe(true);
      expect(debugLines(c.stderr)).toEqual([
        `connect 127.0.0.1:${srv.port} on inet (test mode) fd 3`,
        `connect 127.0.0.1:${srv.port}: SMC handshake failed (ECONNRESET); retrying over plain TCP on fd 3`,
      ]);
      expect(lines(c.stderr).filter((l) => l.startsWith('WARN:'))).toHaveLength(1);
      // non-blocking: the failure would surface later, through SO_ERROR/poll; no retry (README)
      const nb = await connectProbe(fx.probe, ['-d', ...rule], env, '127.0.0.1', srv.port, ['nonblock']);
      await srv.done;
      expect(debugLines(nb.stderr)).toEqual([`connect 127.0.0.1:${srv.port} on inet (test mode) fd 3`]);
    });
  }

  it('a v4-mapped destination is matched as IPv4', async () => {
    const dual = await startServer(fx.probe, [], TEST, '::', 1);
    const m = await connectProbe(fx.probe, ['-d', '--exclude', '127.0.0.1'], TEST, '::ffff:127.0.0.1', dual.port);
    await dual.done;
    expect(probeOf(m)).toMatchObject({ replaced: false, rc: 0 });
    expect(debugLines(m.stderr)).toEqual([`connect ::ffff:127.0.0.1:${dual.port} excluded by policy: plain TCP`]);
  });

  it('the policy decides by destination: --exclude and --include as the Node shim reads them', async () => {
    const srv = await startServer(fx.probe, [], TEST, '127.0.0.1', 4);
    const p = srv.port;
    const cases: Array<[string[], boolean]> = [
      [['--exclude', `127.0.0.1:${p}`], false],
      [['--include', '127.0.0.2'], false],
      [['--include', `127.0.0.0/8:${p}`], true],
      [['--include', '127.0.0.0/8', '--exclude', `*:${p}`], false],
    ];
    for (const [args, smc] of cases) {
      const c = await connectProbe(fx.probe, ['-d', ...args], TEST, '127.0.0.1', p);
      expect(probeOf(c)?.replaced, args.join(' ')).toBe(false);
      expect(echoOf(c)?.echo, args.join(' ')).toBe(true);
      expect(debugLines(c.stderr), args.join(' ')).toEqual([smc ? `connect 127.0.0.1:${p} on inet (test mode) fd 3` : `connect 127.0.0.1:${p} excluded by policy: plain TCP`]);
    }
    await srv.done;
  });

  it('a listener on a wildcard address is SMC unless a rule excludes every address', async () => {
    const a = await startServer(fx.probe, ['-d', '--include', '10.0.0.0/8'], TEST, '0.0.0.0', 0);
    const b = await startServer(fx.probe, ['-d', '--exclude', '0.0.0.0/0'], TEST, '0.0.0.0', 0);
    await Promise.all([a.done, b.done]);
    expect(probeOf({ ...a.out(), code: 0, signal: null }, 'listen')).toMatchObject({ replaced: false, rc: 0 });
    expect(debugLines(a.out().stderr)).toEqual([`listen 0.0.0.0:${a.port} on inet (test mode) fd 3`]);
    expect(probeOf({ ...b.out(), code: 0, signal: null }, 'listen')).toMatchObject({ replaced: false, rc: 0 });
    expect(debugLines(b.out().stderr)).toEqual([`listen 0.0.0.0:${b.port} excluded by policy: plain TCP`]);
  });

  it('a socket() from a signal handler that interrupts the first use goes straight to the kernel (no spin, no deadlock)', async () => {
    const prog = buildFixture(fx.dir, 'signal-init');
    const r = await run(BIN, ['-d', prog], { ...TEST, SMC_RUN_TEST_INIT_SIGNAL: '10' }, { timeoutMs: 20_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('{"handler":1,"main":1}');
  });

  it('SMC_RUN_DISABLE=1: nothing is swapped', async () => {
    const srv = await startServer(fx.probe, [], { ...TEST, SMC_RUN_DISABLE: '1' });
    const c = await connectProbe(fx.probe, ['-d'], { ...TEST, SMC_RUN_DISABLE: '1' }, '127.0.0.1', srv.port);
    await srv.done;
    expect(probeOf(c)?.replaced).toBe(false);
    expect(probeOf({ ...srv.out(), code: 0, signal: null }, 'listen')?.replaced).toBe(false);
    expect(debugLines(c.stderr)).toEqual([]);
  });

  it('-t: the size goes to the SMC socket, debug line as the Node shim writes it', async () => {
    const srv = await startServer(fx.probe, [], TEST);
    const c = await connectProbe(fx.probe, ['-d', '-r', '64k'], TEST, '127.0.0.1', srv.port);
    await srv.done;
    expect(debugLines(c.stderr)[0]).toMatch(/^rcvbuf requested 64k, effective \d+k? \{"fd":\d+\}$/);
  });

  it('python3 client and server: both SMC (debug lines), data intact', async () => {
    const server = "import socket,sys\ns=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1);s.bind(('127.0.0.1',0));s.listen(8)\nprint(s.getsockname()[1],flush=True)\nc,_=s.accept()\nwhile True:\n  d=c.recv(65536)\n  if not d: break\n  c.sendall(d)\n";
    const client = "import socket,sys,hashlib\ndata=bytes(range(256))*2000\nc=socket.create_connection(('127.0.0.1',int(sys.argv[1])))\nc.sendall(data);c.shutdown(socket.SHUT_WR)\ngot=b''\nwhile True:\n  d=c.recv(65536)\n  if not d: break\n  got+=d\nprint(hashlib.sha256(got).hexdigest()==hashlib.sha256(data).hexdigest(),len(got))\n";
    const { spawn } = await import('node:child_process');
    const s = spawn(BIN, ['-d', 'python3', '-c', server], { env: { ...process.env, ...TEST } });
    const exited = new Promise((r) => s.on('close', r));
    let sout = '';
    let serr = '';
    s.stderr.on('data', (d) => (serr += d));
    const port = await new Promise<number>((resolve) => s.stdout.on('data', (d) => { sout += d; if (/\d+\n/.test(sout)) resolve(Number(sout.trim())); }));
    const c = await smcRun(['-d', 'python3', '-c', client, String(port)], TEST);
    await exited;
    expect(c.stdout.trim()).toBe('True 512000');
    expect(debugLines(c.stderr)).toEqual([`connect 127.0.0.1:${port} on inet (test mode) fd 3`]);
    expect(debugLines(serr)).toEqual([`listen 127.0.0.1:${port} on inet (test mode) fd 3`]);
  });

  it('LD_PRELOAD: appended to the user\'s, never twice; not set for node', async () => {
    const other = path.join(fx.dir, 'other.so');
    execFileSync('gcc', ['-shared', '-fPIC', '-o', other, '-x', 'c', '/dev/null']);
    const r = await smcRun(['sh', '-c', 'echo "$LD_PRELOAD"'], { LD_PRELOAD: other });
    expect(r.stdout.trim()).toBe(`${other}:${LIB}`);
    const nested = await smcRun([BIN, 'sh', '-c', 'echo "$LD_PRELOAD"'], { LD_PRELOAD: `${other} ${LIB}` });
    expect(nested.stdout.trim()).toBe(`${other} ${LIB}`);
    const node = await smcRun([process.execPath, '-e', 'console.log(process.env.LD_PRELOAD ?? "unset")'], TEST);
    expect(node.stdout.trim()).toBe('unset');
  });

  it('is inert in a Node process, where the Node shim acts', async () => {
    const prog = "const s=require('net').createServer(c=>c.end()).listen(0,'127.0.0.1',()=>require('net').connect(s.address().port,'127.0.0.1').on('close',()=>s.close()))";
    // the library alone (no Node shim): a C program is swapped, node is not
    const env = { ...process.env, ...TEST, SMC_RUN_DEBUG: '1', LD_PRELOAD: LIB, NODE_OPTIONS: '' };
    const alone = await run(process.execPath, ['-e', prog], env);
    expect(alone.code, alone.stderr).toBe(0);
    expect(debugLines(alone.stderr)).toEqual([]);
    // a node child of a C program under the launcher: one line per socket, the Node shim's
    const tree = await smcRun(['-d', 'sh', '-c', `"${process.execPath}" -e "${prog.replace(/"/g, '\\"')}"`], TEST);
    expect(tree.code, tree.stderr).toBe(0);
    const d = debugLines(tree.stderr).filter((l) => / on inet \(test mode\) fd /.test(l));
    expect(d).toHaveLength(2);
    expect(d[0]).toMatch(/^(listen|bind) 127\.0\.0\.1:\d+ on inet \(test mode\) fd \d+$/);
  });

  it('names programs it cannot reach in one line, and doctor --cmd says the same', async () => {
    const cases: Array<[string, string, RegExp | undefined]> = [
      [buildFixture(fx.dir, 'fakego', 'static-c', ['-static', '-DNOGO']), 'static', /^smc-run: static-c is statically linked: LD_PRELOAD cannot reach it, its connections stay TCP$/],
      [buildFixture(fx.dir, 'fakego', 'gobin'), 'go', /^smc-run: gobin is a Go program \(its socket calls bypass libc\): LD_PRELOAD cannot reach it/],
      [buildFixture(fx.dir, 'fakego', 'gobin-far', ['-DPAD']), 'go', /^smc-run: gobin-far is a Go program/],
      [buildFixture(fx.dir, 'fakego', 'gobin-static', ['-static']), 'go', /^smc-run: gobin-static is a Go program/],
      [fx.probe, 'preload', undefined],
    ];
    if (process.getuid?.() === 0) {
      const suid = path.join(fx.dir, 'suid-probe');
      fs.copyFileSync(fx.probe, suid);
      fs.chownSync(suid, 65534, 65534);
      fs.chmodSync(suid, 0o4755);
      cases.push([suid, 'setuid', /^smc-run: suid-probe is setuid: the loader ignores LD_PRELOAD for it, its connections stay TCP$/]);
    }
    for (const [file, mech, line] of cases) await expectMechanism(file, mech, line);
    if (process.getuid?.() === 0) {
      // file capabilities: secure mode for a user other than root (root's exec keeps LD_PRELOAD)
      const capped = path.join(fx.dir, 'cap-probe');
      fs.copyFileSync(fx.probe, capped);
      fs.chmodSync(fx.dir, 0o755);
      fs.chmodSync(capped, 0o755);
      execFileSync('setcap', ['cap_net_bind_service+ep', capped]);
      expect(dryRun([capped]).mechanism).toBe('preload');
      const asNobody = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];
      // the launcher's files, where that user can read them: a clone under /root (mode 700), as a newcomer
      // working as root has it, is out of its reach
      const stage = path.join(fx.dir, 'pkg');
      for (const f of ['bin/smc-run', 'dist/preload.js', 'build/Release/smc-preload.so']) {
        fs.mkdirSync(path.dirname(path.join(stage, f)), { recursive: true, mode: 0o755 });
        fs.copyFileSync(path.join(REPO, f), path.join(stage, f));
        fs.chmodSync(path.join(stage, f), 0o755);
      }
      const bin = path.join(stage, 'bin', 'smc-run');
      const r = await run(asNobody[0]!, [...asNobody.slice(1), '/bin/sh', bin, '--dry-run', capped], { ...process.env, HOME: '/' });
      expect(r.stdout.split('\n')[0], r.stderr).toBe('mechanism=filecap');
      const line = await run(asNobody[0]!, [...asNobody.slice(1), '/bin/sh', bin, capped, 'x'], { ...process.env, ...TEST, HOME: '/' });
      expect(lines(line.stderr).filter((l) => l.startsWith('smc-run:'))).toEqual([
        'smc-run: cap-probe has file capabilities (setcap): the loader runs it in secure mode and ignores LD_PRELOAD, its connections stay TCP',
      ]);
    }
  });

  async function expectMechanism(file: string, mech: string, line: RegExp | undefined): Promise<void> {
    const r = await smcRun([file, 'x'], TEST);
    const out = lines(r.stderr).filter((l) => l.startsWith('smc-run:'));
    if (line) expect(out, file).toEqual([expect.stringMatching(line)]);
    else expect(out, file).toEqual([]);
    // the launcher's dry run names the same mechanism, runs nothing, and sets LD_PRELOAD only where it helps
    const dry = dryRun([file]);
    expect(dry.mechanism, file).toBe(mech);
    expect(dry.env.LD_PRELOAD, file).toBe(mech === 'preload' ? LIB : undefined);
    const doc = await smcRun(['doctor', '--no-selftest', '--json', '--cmd', file]);
    const check = (JSON.parse(doc.stdout) as { checks: Array<{ id: string; status: string; message: string }> }).checks.find((c) => c.id === 'program.mechanism');
    expect(check?.message, file).toContain(file);
    expect(check?.status, file).toBe(mech === 'preload' ? 'ok' : 'warn');
  }

  it('node programs and missing commands', () => {
    expect(dryRun([process.execPath, '-e', '0']).mechanism).toBe('node');
    expect(dryRun([path.join(REPO, 'node_modules', '.bin', 'tsc')]).mechanism).toBe('node');
    expect(() => dryRun([path.join(fx.dir, 'no-such-program')])).toThrow(/^command not found: /);
  });
});
