// The differential suite of the LD_PRELOAD library (test mode on this host; test/kernel/smcd/
// preload-idioms.test.ts runs it on real AF_SMC): test/fixtures/preload/idioms.c performs the socket
// idioms real programs use (options read back after connect, epoll before connect in Boost.Asio's
// order, poll, select, blocking and non-blocking connects, dup/dup2 before connect, fork after connect,
// bound clients, IPv4, IPv6 and IPv4-mapped destinations, a dual-stack listener) and prints what the
// program observes. Run without the library, under it without rules, with --include, with --exclude and on
// the TCP retry path, every line must be the same: the library may change the transport and nothing else.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture, debugLines, startServer, connectProbe, tempDir, sockprobeFixture } from '../helpers/preload-lib';
import { label, VECTORS } from '../helpers/policy-vectors';
import { REPO, run, smcRun } from '../helpers/run';

const TEST = { SMC_RUN_SOCKET_FAMILY: 'inet' };
const RETRY = { ...TEST, SMC_RUN_TEST_CONNECT_FAULT: 'ECONNRESET' };

/** The program's observations, one JSON line per idiom. */
const observed = (stdout: string): string[] => stdout.split('\n').filter((l) => l.startsWith('{'));

describe('the same program with and without the LD_PRELOAD library (test mode)', () => {
  let dir = '';
  let idioms = '';
  let baseline: string[] = [];
  beforeAll(async () => {
    dir = tempDir();
    idioms = buildFixture(dir, 'idioms');
    const r = await run(idioms, [], { ...process.env, ...TEST });
    expect(r.code, r.stderr).toBe(0);
    baseline = observed(r.stdout);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('the program alone: every idiom works (the reference the runs below are held to)', () => {
    expect(baseline).toHaveLength(17);
    for (const line of baseline) {
      const o = JSON.parse(line) as Record<string, unknown>;
      if (o.idiom === 'refused') expect(o.errno).toBe('ECONNREFUSED');
      else expect(o.echo ?? o.out ?? o.in ?? o.parent, line).toBe(1);
    }
  });

  const variants: Array<{ name: string; args: string[]; env: NodeJS.ProcessEnv; connects: RegExp }> = [
    { name: 'no rules', args: [], env: TEST, connects: / on inet \(test mode\) fd \d+$/ },
    { name: '--include of every destination', args: ['--include', '127.0.0.0/8', '--include', '::1'], env: TEST, connects: / on inet \(test mode\) fd \d+$/ },
    { name: '--exclude of every destination', args: ['--exclude', '127.0.0.0/8', '--exclude', '::1'], env: TEST, connects: / excluded by policy: plain TCP$/ },
    { name: 'the TCP retry after every failed handshake', args: [], env: RETRY, connects: / on inet \(test mode\) fd \d+$| retrying over plain TCP on fd \d+/ },
    { name: 'the TCP retry with --include', args: ['--include', '127.0.0.0/8', '--include', '::1'], env: RETRY, connects: / on inet \(test mode\) fd \d+$| retrying over plain TCP on fd \d+/ },
  ];
  for (const v of variants) {
    it(`${v.name}: every observation identical`, async () => {
      const r = await smcRun(['-d', ...v.args, idioms], v.env);
      expect(r.code, r.stderr).toBe(0);
      const got = observed(r.stdout);
      baseline.forEach((line, i) => expect(got[i], `${v.name}: idiom ${i + 1} of ${baseline.length}`).toBe(line));
      expect(got).toHaveLength(baseline.length);
      const connects = debugLines(r.stderr).filter((l) => l.startsWith('connect '));
      // the idioms connect 16 times on sockets the library made (the non-blocking ones twice more, the second EISCONN untouched; connect-through-dup on a number the library did not make, logged only with rules)
      expect(connects.length, r.stderr).toBeGreaterThanOrEqual(14);
      for (const l of connects) expect(l).toMatch(v.connects);
    }, 60_000);
  }

  it('the retry path carries dups and epoll registrations over, and replays every option the program set', async () => {
    const r = await smcRun(['-d', idioms, 'options', 'epoll-blocking', 'dup-before-connect', 'bound-addr-0', 'bound-port'], RETRY);
    expect(observed(r.stdout)).toEqual(baseline.filter((l) => /"idiom":"(options|dup-before-connect|epoll-blocking|bound-addr-0|bound-port)"/.test(l)));
    const retried = debugLines(r.stderr).filter((l) => l.includes('retrying over plain TCP'));
    expect(retried).toHaveLength(5);
    expect(retried.filter((l) => l.endsWith('(its dups and epoll registrations too)'))).toHaveLength(2);
  });

  it('an excluded listener is decided in place too: nothing changes for the program', async () => {
    const r = await smcRun(['-d', '--exclude', '0.0.0.0/0', '--exclude', '::/0', idioms], TEST);
    expect(observed(r.stdout)).toEqual(baseline);
    expect(debugLines(r.stderr).filter((l) => l.startsWith('listen '))).toEqual([expect.stringMatching(/^listen :::\d+ excluded by policy: plain TCP$/)]);
  });
});

describe('accept() on an SMC listener (test mode)', () => {
  const fx = sockprobeFixture();
  it("drops one connection's SMC handshake error, as a TCP listener never reports it, and serves the next", async () => {
    const srv = await startServer(fx.probe, ['-d'], { ...TEST, SMC_RUN_TEST_ACCEPT_FAULT: 'ECONNRESET' }, '127.0.0.1', 1);
    const first = await connectProbe(fx.probe, [], TEST, '127.0.0.1', srv.port);
    const second = await connectProbe(fx.probe, [], TEST, '127.0.0.1', srv.port);
    expect(await srv.done).toBe(0);
    expect(first.stdout).toMatch(/"echo":false/);
    expect(second.stdout).toMatch(/"echo":true/);
    expect(debugLines(srv.out().stderr)).toContain('accept on fd 3: one connection failed before it was accepted (ECONNRESET): dropped, as TCP never reports it');
  });
});


describe('the rule grammar in the LD_PRELOAD library: the shared vectors (test/fixtures/policy/vectors.json)', () => {
  it('decides every vector as the Node parser does, and refuses the same malformed rules', () => {
    // the library's own parser and matcher, through its test entry point (python3's ctypes: no compiler)
    const script = `
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])
f = lib.smc_run_test_decide
f.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
v = json.load(open(sys.argv[2]))
print(json.dumps({"decisions": [f(d["include"].encode(), d["exclude"].encode(), d["address"].encode(), d["port"], int(d["listener"])) for d in v["decisions"]],
                  "invalid": [f(t.encode(), b"", b"10.0.0.1", 1, 0) for t in v["invalid"]]}))`;
    const lib = path.join(REPO, 'build', 'Release', 'smc-preload.so');
    const out = JSON.parse(execFileSync('python3', ['-c', script, lib, path.join(REPO, 'test', 'fixtures', 'policy', 'vectors.json')], { encoding: 'utf8' })) as { decisions: number[]; invalid: number[] };
    VECTORS.decisions.forEach((d, i) => expect(out.decisions[i], label(d)).toBe(d.smc ? 1 : 0));
    VECTORS.invalid.forEach((t, i) => expect(out.invalid[i], t).toBe(-1));
  });
});
