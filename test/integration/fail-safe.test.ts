// The shim never breaks a program and never goes quiet: when its runtime bundle cannot load, or Node's TCP
// handle class is not the one the hook was written for (a future Node), the program runs on plain TCP and
// the user gets one notice. Each case runs the policy scenario (one echoed connection) under the preload.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, SCENARIOS, run, scenarioResults, type ScenarioResult } from '../helpers/run';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-fail-safe-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const CONNECT = JSON.stringify({ listen: '127.0.0.1', connect: { host: '127.0.0.1' } });
const ENV = { SMC_RUN_SOCKET_FAMILY: 'inet', SMC_RUN_SESSION: '', NODE_OPTIONS: '' };

async function underPreload(requires: string[], env: NodeJS.ProcessEnv = {}) {
  const args = [...requires.flatMap((r) => ['--require', r]), path.join(SCENARIOS, 'policy.cjs'), CONNECT];
  const r = await run(process.execPath, args, { ...ENV, ...env });
  const results = scenarioResults(r.stdout);
  expect(results, r.stdout + r.stderr).toHaveLength(1);
  const res = results[0] as ScenarioResult & { seen: { isSmc: boolean } };
  expect(res.ok, res.error ?? r.stderr).toBe(true); // the connection worked, every byte echoed
  expect(res.seen.isSmc).toBe(false); // on plain TCP
  expect(res.hook?.smc ?? 0).toBe(0);
  return { stderr: r.stderr, notices: r.stderr.split('\n').filter((l) => l.includes('smc-run')) };
}

/** A copy of dist/ as an installed package has it, damaged by `damage`. */
function damagedCopy(name: string, damage: (dist: string) => void): string {
  const dist = path.join(tmp, name, 'dist');
  fs.cpSync(path.join(REPO, 'dist'), dist, { recursive: true });
  damage(dist);
  return path.join(dist, 'preload.js');
}

describe('a runtime bundle that fails to load: one notice, plain TCP', () => {
  it('a corrupt dist/preload-runtime.js', async () => {
    const preload = damagedCopy('corrupt', (d) => fs.writeFileSync(path.join(d, 'preload-runtime.js'), 'this is not { javascript\n'));
    const { notices } = await underPreload([preload]);
    expect(notices, notices.join('\n')).toHaveLength(1);
    expect(notices[0]).toMatch(/SMC runtime failed to load \(.*\): running on plain TCP; fix: reinstall smc-run/);
  });

  it('a missing dist/preload-runtime.js', async () => {
    const preload = damagedCopy('missing', (d) => fs.rmSync(path.join(d, 'preload-runtime.js')));
    const { notices } = await underPreload([preload]);
    expect(notices, notices.join('\n')).toHaveLength(1);
    expect(notices[0]).toMatch(/SMC runtime failed to load \(Cannot find module .*\): running on plain TCP/);
  });

  it('the notice module gone too: the preload writes the line itself', async () => {
    const preload = damagedCopy('bare', (d) => {
      fs.rmSync(path.join(d, 'preload-runtime.js'));
      fs.rmSync(path.join(d, 'hook', 'notice.js'));
    });
    const { notices } = await underPreload([preload]);
    expect(notices, notices.join('\n')).toHaveLength(1);
    expect(notices[0]).toMatch(/^WARN: smc-run\[\d+\]: SMC runtime failed to load/);
  });
});

// A --require'd script that changes the TCP handle class before the preload runs, as a future Node might.
const CHANGE = path.join(tmp, 'change-handle-class.cjs');
fs.writeFileSync(
  CHANGE,
  `'use strict';
const proto = process.binding('tcp_wrap').TCP.prototype;
const how = process.env.CHANGE;
const find = (name) => { for (let o = proto; o; o = Object.getPrototypeOf(o)) { const d = Object.getOwnPropertyDescriptor(o, name); if (d) return d; } };
if (how === 'open-not-a-function') proto.open = 42;
if (how === 'no-bind6') { for (let o = proto; o; o = Object.getPrototypeOf(o)) delete o.bind6; }
if (how === 'listen-read-only') Object.defineProperty(proto, 'listen', { value: find('listen').value, writable: false, configurable: false });
if (how === 'connect-getter') { const fn = find('connect').value; Object.defineProperty(proto, 'connect', { get() { return fn; }, configurable: true }); }
if (how === 'fd-null') { const d = find('fd'); Object.defineProperty(proto, 'fd', { configurable: true, get() { const v = d.get.call(this); return v === -1 ? null : v; } }); }
`,
);

describe('a TCP handle class unlike the one the hook knows: one notice, plain TCP, no crash', () => {
  const PRELOAD = path.join(REPO, 'dist', 'preload.js');
  for (const [change, problem] of [
    ['open-not-a-function', /TCP\.prototype\.open is a number/],
    ['no-bind6', /TCP\.prototype\.bind6 is missing/],
    ['listen-read-only', /TCP\.prototype\.listen cannot be replaced/],
    ['connect-getter', /TCP\.prototype\.connect cannot be replaced/],
    ['fd-null', /handle\.fd is null before the handle has a socket/],
  ] as const) {
    it(change, async () => {
      const { notices } = await underPreload([CHANGE, PRELOAD], { CHANGE: change });
      expect(notices, notices.join('\n')).toHaveLength(1);
      expect(notices[0]).toMatch(/TCP handle class differs from what smc-run knows/);
      expect(notices[0]).toMatch(problem);
      expect(notices[0]).toMatch(/running on plain TCP/);
    });
  }
});
