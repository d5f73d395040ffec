// The launcher's contract on this host: arguments reach the program untouched, exit codes and signals
// pass through, bad input gets one line, and without SMC the program runs on TCP with exactly one
// notice for the whole process tree.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { BIN, EXPECT_MODE, smcRun } from '../helpers/run';

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

  it('--help and --version print to stdout and exit 0', async () => {
    const h = await smcRun(['--help']);
    expect(h.code).toBe(0);
    expect(h.stdout).toContain('smc-run [options] <command> [args...]');
    expect(h.stdout).toContain('Examples:');
    const v = await smcRun(['--version']);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.skipIf(EXPECT_MODE)('without SMC in the kernel: runs on TCP with exactly one notice for the process tree', async () => {
    // a parent that starts two more node processes, each making a connection
    const child = `const net=require('net');const s=net.createServer(c=>c.end('x')).listen(0,'127.0.0.1',()=>{net.connect(s.address().port,'127.0.0.1').on('data',d=>{process.stdout.write(String(d));s.close()})})`;
    const parent = `const {execFileSync}=require('child_process');for(let i=0;i<2;i++)process.stdout.write(execFileSync(process.execPath,['-e',${JSON.stringify(child)}]));`;
    const r = await smcRun([node, '-e', parent]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('xx');
    const notices = lines(r.stderr);
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
});
