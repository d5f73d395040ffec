// The launcher's contract on this host: arguments reach the program untouched, exit codes and signals
// pass through, bad input gets one line, and without SMC the program runs on TCP with exactly one
// notice for the whole process tree.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HOST_HAS_SMC } from '../helpers/host-smc';
import { BIN, EXPECT_MODE, REPO, run, smcRun } from '../helpers/run';

const node = process.execPath;
const lines = (s: string): string[] => s.split('\n').filter((l) => l.trim() !== '');

describe('launcher', () => {
  it('passes arguments through untouched, node options included', async () => {
    const args = ['-r', 'node:util', '-e', 'console.log(JSON.stringify(process.argv.slice(1)))', '--', 'a b', '1', '--x', '-d', '', '"q"'];
    const r = await smcRun([node, ...args], { SMC_RUN_SOCKET_FAMILY: 'inet' });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(['a b', '1', '--x', '-d', '', '"q"']);
  });

  it('keeps the user NODE_OPTIONS and adds the shim once, even nested', async () => {
    const script = 'console.log(process.env.NODE_OPTIONS)';
    const r = await smcRun([node, BIN, node, '-e', script], { NODE_OPTIONS: '--max-old-space-size=100', SMC_RUN_SOCKET_FAMILY: 'inet' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^--max-old-space-size=100 --require ".*preload\.js"\n$/);
  });

  it('quotes the shim path in NODE_OPTIONS so node reads it back: spaces, double quotes, backslashes', async () => {
    // a package root whose name needs quoting: a copy of bin/smc-run (a symlink would be resolved to the
    // repo), with dist/ and build/ linked in; node must load the preload from that path and hook a listen
    const top = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-quote-'));
    const probe = "require('net').createServer().listen(0,'127.0.0.1',function(){this.close();console.log(JSON.stringify({hook:globalThis[Symbol.for('smc-run.hook')]!==undefined,opts:process.env.NODE_OPTIONS}))})";
    try {
      for (const name of ['with space', 'q"uote', 'back\\slash', 'both \\" x']) {
        const root = path.join(top, name);
        fs.mkdirSync(path.join(root, 'bin'), { recursive: true });
        fs.copyFileSync(BIN, path.join(root, 'bin', 'smc-run'));
        for (const d of ['dist', 'build']) fs.symlinkSync(path.join(REPO, d), path.join(root, d));
        const user = '--max-old-space-size=64 --title="a b"';
        const r = await run('/bin/sh', [path.join(root, 'bin', 'smc-run'), node, '-e', probe], { NODE_OPTIONS: user, SMC_RUN_SOCKET_FAMILY: 'inet' });
        expect(r.code, `${name}: ${r.stderr}`).toBe(0);
        const preload = path.join(root, 'dist', 'preload.js');
        expect(JSON.parse(r.stdout), name).toEqual({ hook: true, opts: `${user} --require "${preload.replace(/[\\"]/g, (c) => `\\${c}`)}"` });
      }
    } finally {
      fs.rmSync(top, { recursive: true, force: true });
    }
  });

  it('--dry-run prints the mechanism and the variables the program would get, and runs nothing', async () => {
    const marker = path.join(os.tmpdir(), `smc-run-dry-${process.pid}`);
    const r = await smcRun(['--dry-run', '-d', '--include', '10.0.0.0/8', '--no-tcp-retry', 'sh', '-c', `touch ${marker}`], { SMC_RUN_INCLUDE: '192.168.0.0/16', LD_PRELOAD: '' });
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(marker)).toBe(false);
    const got = Object.fromEntries(lines(r.stdout).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    expect(got).toEqual({
      mechanism: 'preload',
      NODE_OPTIONS: `--require "${path.join(REPO, 'dist', 'preload.js')}"`,
      LD_PRELOAD: path.join(REPO, 'build', 'Release', 'smc-preload.so'),
      SMC_RUN_SESSION: expect.stringMatching(/^\d+-\d+$/),
      SMC_RUN_DEBUG: '1',
      SMC_RUN_TCP_RETRY: '0',
      SMC_RUN_INCLUDE: '192.168.0.0/16,10.0.0.0/8',
    });
    expect(lines((await smcRun(['--dry-run', node, '-e', '0'])).stdout)[0]).toBe('mechanism=node');
  });

  it('returns the exit code of the command', async () => {
    expect((await smcRun(['sh', '-c', 'exit 7'])).code).toBe(7);
    expect((await smcRun([node, '-e', 'process.exitCode = 3'], { SMC_RUN_SOCKET_FAMILY: 'inet' })).code).toBe(3);
  });

  it('forwards SIGTERM to the command and reports 128+15', async () => {
    const child = spawn(node, [BIN, node, '-e', 'process.on("SIGTERM", () => { console.log("got TERM"); process.exit(42); }); console.log("ready"); setInterval(() => {}, 1000)'], {
      env: { ...process.env, SMC_RUN_SOCKET_FAMILY: 'inet' },
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('ready')) child.kill('SIGTERM');
    });
    const code = await new Promise((r) => child.on('close', r));
    expect(out).toContain('got TERM');
    expect(code).toBe(42);
    const r2 = spawn(node, [BIN, 'sh', '-c', 'kill -TERM $$']);
    expect(await new Promise((r) => r2.on('close', r))).toBe(143);
  });

  it('an unknown command exits 127 with one line', async () => {
    const r = await smcRun(['no-such-command-smc-run']);
    expect(r.code).toBe(127);
    expect(lines(r.stderr)).toEqual(['smc-run: command not found: no-such-command-smc-run']);
  });

  it('bad options exit 2 with one line, never a help dump', async () => {
    for (const args of [['--bogus', 'node'], ['--include', '10.0.0.0/33', 'node'], ['-t', 'lots', 'node'], ['--proto', 'x', 'node'], []]) {
      const r = await smcRun(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(lines(r.stderr), args.join(' ')).toHaveLength(1);
      expect(r.stdout).toBe('');
    }
  });

  it('socket buffer sizes of 1 GiB and more (-t/-r, SMC_RUN_SNDBUF/RCVBUF): exit 2, one line naming the limit', async () => {
    const limit = 'is too large for a socket buffer: at most 1073741823 bytes (SO_SNDBUF/SO_RCVBUF take an int that the kernel doubles: INT_MAX/2)';
    const cases: [string[], Record<string, string>, string][] = [
      [['-t', '4g', 'node'], {}, `smc-run: "4g" ${limit}`],
      [['--rcvbuf=2147483648', 'node'], {}, `smc-run: "2147483648" ${limit}`],
      [['-r1g', 'node'], {}, `smc-run: "1g" ${limit}`],
      [['-t', '0001g', 'node'], {}, `smc-run: "0001g" ${limit}`],
      [['-t', '99999999999999999999', 'node'], {}, `smc-run: "99999999999999999999" ${limit}`],
      [['node'], { SMC_RUN_SNDBUF: '2g' }, `smc-run: SMC_RUN_SNDBUF: "2g" ${limit}`],
      [['node'], { SMC_RUN_RCVBUF: '4294967296' }, `smc-run: SMC_RUN_RCVBUF: "4294967296" ${limit}`],
    ];
    for (const [args, env, line] of cases) {
      const r = await smcRun([...args, '-e', '0'], env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(lines(r.stderr), args.join(' ')).toEqual([line]);
      expect(r.stdout).toBe('');
    }
    // the largest the kernel keeps still runs (and leading zeros are decimal, as in the shim)
    const show = 'console.log(process.env.SMC_RUN_SNDBUF, process.env.SMC_RUN_RCVBUF)';
    const ok = await smcRun(['-t', '1073741823', '-r', '0010', node, '-e', show], { SMC_RUN_SOCKET_FAMILY: 'inet' });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe('1073741823 0010\n');
  });

  it('--help and --version print to stdout and exit 0', async () => {
    const h = await smcRun(['--help']);
    expect(h.code).toBe(0);
    expect(h.stdout).toContain('smc-run [options] <command> [args...]');
    expect(h.stdout).toContain('Examples:');
    const v = await smcRun(['--version']);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.skipIf(EXPECT_MODE)(HOST_HAS_SMC ? 'with SMC in the kernel: a process tree runs with no notice' : 'without SMC in the kernel: runs on TCP with exactly one notice for the process tree', async () => {
    // a parent that starts two more node processes, each making a connection
    const child = `const net=require('net');const s=net.createServer(c=>c.end('x')).listen(0,'127.0.0.1',()=>{net.connect(s.address().port,'127.0.0.1').on('data',d=>{process.stdout.write(String(d));s.close()})})`;
    const parent = `const {execFileSync}=require('child_process');for(let i=0;i<2;i++)process.stdout.write(execFileSync(process.execPath,['-e',${JSON.stringify(child)}]));`;
    const r = await smcRun([node, '-e', parent]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('xx');
    const notices = lines(r.stderr);
    if (HOST_HAS_SMC) {
      expect(notices).toEqual([]);
      return;
    }
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/no SMC in this kernel \(IPv4: EAFNOSUPPORT, IPv6: EAFNOSUPPORT\): running on plain TCP/);
  });

  it('with the addon missing: runs on TCP with one notice saying how to fix it', async () => {
    const r = await smcRun([node, '-e', `require('net').createServer().listen(0, function () { this.close(); console.log('ran'); })`], { SMC_RUN_ADDON: '/nonexistent/smc_run.node' });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('ran\n');
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/native addon unavailable .*fix: build it from source: npm run build:native --prefix \S+ \(needs python3, make, g\+\+\)$/m);
  });

  it('one notice when the program itself notices first and a child after it (the program keeps its marker)', async () => {
    // the arch lanes run this under qemu-user, where the program reads a start time of its own that is
    // not the launcher's: it swept its own marker and the child printed the notice again
    const code = `const net=require('net');const child=process.env.SMC_TEST_ROLE==='child';const s=net.createServer().listen(0,'127.0.0.1',()=>{net.connect(s.address().port,'127.0.0.1',function(){this.destroy();s.close(()=>{if(child)console.log('child ran');else require('child_process').execFileSync(process.execPath,['-e',process.env.SMC_TEST_CODE],{stdio:'inherit',env:{...process.env,SMC_TEST_ROLE:'child'}})})})})`;
    const r = await smcRun([node, '-e', code], { SMC_RUN_ADDON: '/nonexistent/smc_run.node', SMC_TEST_CODE: code });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('child ran\n');
    expect(lines(r.stderr)).toHaveLength(1);
  });

  it('SMC_RUN_DISABLE=1 turns the shim off silently', async () => {
    const r = await smcRun([node, '-e', `console.log(typeof globalThis[Symbol.for('smc-run.hook')])`], { SMC_RUN_DISABLE: '1' });
    expect(r.stdout).toBe('undefined\n');
    expect(r.stderr).toBe('');
  });

  it('-d logs one debug line per adopted socket to stderr, never stdout', async () => {
    const prog = `const net=require('net');const s=net.createServer(c=>c.end()).listen(0,'127.0.0.1',()=>net.connect(s.address().port,'127.0.0.1').on('close',()=>s.close()).resume())`;
    const r = await smcRun(['-d', node, '-e', prog], { SMC_RUN_SOCKET_FAMILY: 'inet' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(lines(r.stderr).filter((l) => / on inet \(test mode\) fd \d+/.test(l))).toHaveLength(2);
  });

  it("execs the command: the program has the launcher's PID, and signals reach it directly", async () => {
    const child = spawn(BIN, [node, '-e', 'process.on("SIGTERM", () => { console.log("TERM"); process.exit(5); }); console.log(process.pid); setInterval(() => {}, 1000)'], {
      env: { ...process.env, SMC_RUN_SOCKET_FAMILY: 'inet' },
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n') && !out.includes('TERM')) child.kill('SIGTERM');
    });
    const code = await new Promise((r) => child.on('close', r));
    expect(Number(lines(out)[0])).toBe(child.pid);
    expect(lines(out)[1]).toBe('TERM');
    expect(code).toBe(5);
  });

  it('works through symlinks (as npm installs bin entries) and under dash and busybox sh', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-link-'));
    fs.mkdirSync(path.join(dir, 'a'));
    fs.symlinkSync(BIN, path.join(dir, 'a', 'real'));
    fs.symlinkSync('a/real', path.join(dir, 'smc-run')); // relative link to a link
    const shells = [['/bin/sh'], ...(fs.existsSync('/usr/bin/busybox') ? [['/usr/bin/busybox', 'sh']] : [])];
    for (const sh of shells) {
      const r = await run(sh[0] as string, [...sh.slice(1), path.join(dir, 'smc-run'), node, '-e', 'console.log(process.env.NODE_OPTIONS)'], { SMC_RUN_SOCKET_FAMILY: 'inet' });
      expect(r.code, `${sh.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stdout.trim()).toBe(`--require "${path.join(REPO, 'dist', 'preload.js')}"`);
    }
    // a PATH without readlink (minimal containers): the link is read through node
    const bare = path.join(dir, 'bare');
    fs.mkdirSync(bare);
    fs.symlinkSync(node, path.join(bare, 'node'));
    const r = await run('/bin/sh', [path.join(dir, 'smc-run'), 'node', '-e', 'console.log("ok")'], { PATH: bare, SMC_RUN_SOCKET_FAMILY: 'inet' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('ok\n');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('options in every form; address lists are checked before the program runs', async () => {
    const show = 'console.log(["INCLUDE","EXCLUDE","SNDBUF","RCVBUF","PROTO","DEBUG","LOG_FORMAT"].map(k=>process.env["SMC_RUN_"+k]??"-").join(" "))';
    const r = await smcRun(['--include=10.0.0.0/8', '--include', '192.168.0.0/16:80', '--exclude', '10.1.0.0/16', '-t1M', '--rcvbuf=256k', '--proto', 'af_smc', '--log-json', '--', node, '-e', show], { SMC_RUN_INCLUDE: '172.16.0.0/12', SMC_RUN_SOCKET_FAMILY: 'inet' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('172.16.0.0/12,10.0.0.0/8,192.168.0.0/16:80 10.1.0.0/16 1M 256k af_smc - json');
    // a bad list inherited from the environment is caught as well (exit 2, one line, program not run)
    const bad = await smcRun([node, '-e', 'console.log("ran")'], { SMC_RUN_EXCLUDE: 'nonsense' });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(lines(bad.stderr)).toHaveLength(1);
    expect(bad.stderr).toMatch(/^smc-run: SMC_RUN_EXCLUDE: /);
    const missing = await smcRun(['--include']);
    expect(missing.code).toBe(2);
    expect(lines(missing.stderr)).toEqual(['smc-run: option --include needs a value (see smc-run --help)']);
    // an empty list (an unset variable: --include "$NETS") would mean every destination: refused, not dropped
    for (const args of [['--include', ''], ['--exclude=, '], ['--include', '10.0.0.0/8', '--exclude', ' ']]) {
      const empty = await smcRun([...args, node, '-e', 'console.log("ran")']);
      expect(empty.code, args.join(' ')).toBe(2);
      expect(empty.stdout).toBe('');
      expect(lines(empty.stderr), args.join(' ')).toEqual([expect.stringMatching(/^smc-run: option --(in|ex)clude needs at least one CIDR\[:PORT\] \(given: ".*"; see smc-run --help\)$/)]);
    }
    // a zone names an interface, not addresses: refused by the one grammar (the C library ignored SMC for it)
    const zone = await smcRun(['--include', 'fe80::1%lo', node, '-e', 'console.log("ran")']);
    expect(zone.code).toBe(2);
    expect(lines(zone.stderr)).toEqual([expect.stringMatching(/a rule names addresses, not zones/)]);
  });

  it('bun and deno: one notice that nothing is hooked, then the command runs', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-bun-'));
    for (const name of ['bun', 'deno']) {
      fs.writeFileSync(path.join(dir, name), '#!/bin/sh\necho "$0 ran $*"\n', { mode: 0o755 });
      const r = await smcRun([name, 'x.ts'], { PATH: `${dir}:${process.env.PATH ?? ''}` });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`${path.join(dir, name)} ran x.ts\n`);
      expect(lines(r.stderr)).toEqual([`smc-run: ${name} is not Node.js: nothing is hooked, its connections stay TCP (the shim runs in Node processes it starts)`]);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a child that cannot read the shim: what can be detected is said in one line', async () => {
    // the package without its built shim
    const pkg = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-pkg-'));
    fs.mkdirSync(path.join(pkg, 'bin'));
    fs.copyFileSync(BIN, path.join(pkg, 'bin', 'smc-run'));
    fs.chmodSync(path.join(pkg, 'bin', 'smc-run'), 0o755);
    const r = await run(path.join(pkg, 'bin', 'smc-run'), [node, '-e', 'console.log("ran")']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(lines(r.stderr)).toEqual([`smc-run: cannot read the shim ${pkg}/dist/preload.js (not built? run "npm run build" in the smc-run package)`]);
    // a chroot without the package at the same path: Node would not start there
    const c = await smcRun(['chroot', pkg, 'node', '-e', '0']);
    expect(c.code).toBe(1);
    expect(lines(c.stderr)).toEqual([`smc-run: the shim ${path.join(REPO, 'dist', 'preload.js')} does not exist inside the chroot ${pkg}: Node would not start there; run smc-run inside the chroot instead`]);
    // sudo resets the environment: the command would silently run without the shim
    const fake = path.join(pkg, 'fake');
    fs.mkdirSync(fake);
    fs.writeFileSync(path.join(fake, 'sudo'), '#!/bin/sh\necho "sudo $*"\n', { mode: 0o755 });
    const s = await smcRun(['sudo', 'node', 'app.js'], { PATH: `${fake}:${process.env.PATH ?? ''}` });
    expect(s.code).toBe(0);
    expect(lines(s.stderr)).toEqual(['smc-run: sudo resets the environment: the command runs without the shim; run "sudo smc-run ..." instead']);
    const e = await smcRun(['sudo', '-E', 'node', 'app.js'], { PATH: `${fake}:${process.env.PATH ?? ''}` });
    expect(e.stderr).toBe('');
    fs.rmSync(pkg, { recursive: true, force: true });
  });

  it('node bin/smc-run CMD (the file read as JavaScript) launches through the same sh launcher', async () => {
    const r = await run(node, [BIN, '-d', node, '-e', 'console.log(process.env.SMC_RUN_DEBUG, process.env.NODE_OPTIONS)'], { SMC_RUN_SOCKET_FAMILY: 'inet' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^1 --require ".*preload\.js"\n$/);
    const bad = await run(node, [BIN, '--bogus', 'node']);
    expect(bad.code).toBe(2);
    expect(lines(bad.stderr)).toEqual(['smc-run: unknown option --bogus (see smc-run --help)']);
  });
});
