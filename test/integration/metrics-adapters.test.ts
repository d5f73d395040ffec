// The in-process adapters (prom-client, OpenTelemetry) open each target's namespace once, when the
// metrics are registered, as `stats serve` does: a --netns path that is removed and re-created, or a
// --target PID that exits, reads as gone (smc_up 0 with its reason), never as the namespace the path or
// the PID leads to at scrape time. Needs root and ip(8) for the named namespace; no SMC.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { registerPromClient } from '../../src/metrics';
import { processInOwnNetns } from '../helpers/netns';

const children: ChildProcess[] = [];
const names: string[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const n of names.splice(0)) {
    try {
      execFileSync('ip', ['netns', 'del', n], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  }
});

const samples = (text: string, metric: string): string[] => text.split('\n').filter((l) => l.startsWith(`${metric}{`));

describe('in-process adapters keep the namespace they were registered with', () => {
  it('a --netns path removed and re-created reads as netns_gone, not as the new namespace', async () => {
    const name = `smcrun-adapt-${process.pid}`;
    names.push(name);
    execFileSync('ip', ['netns', 'add', name]);
    const registry = new Registry();
    const unregister = registerPromClient(registry, { targets: [{ netns: name }] });
    try {
      const first = await registry.metrics();
      expect(samples(first, 'smc_down_reason').filter((l) => l.includes('reason="netns_gone"'))).toEqual([]);
      execFileSync('ip', ['netns', 'del', name]);
      execFileSync('ip', ['netns', 'add', name]);
      const after = await registry.metrics();
      expect(samples(after, 'smc_up')).toEqual([`smc_up{netns="${name}"} 0`]);
      expect(samples(after, 'smc_down_reason')).toEqual([expect.stringMatching(new RegExp(`^smc_down_reason\\{netns="${name}",reason="netns_gone",code="[A-Z]+"\\} 1$`))]);
    } finally {
      unregister();
    }
  });

  it('a --target PID that exits reads as target_exited, and a target not there fails the registration', async () => {
    const child = await processInOwnNetns(children);
    const registry = new Registry();
    const unregister = registerPromClient(registry, { targets: [{ target: child.pid }] });
    try {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      const after = await registry.metrics();
      expect(samples(after, 'smc_up')).toEqual([`smc_up{netns="pid:${child.pid}"} 0`]);
      expect(samples(after, 'smc_down_reason').join('\n')).toContain('reason="target_exited"');
    } finally {
      unregister();
    }
    expect(() => registerPromClient(new Registry(), { targets: [{ target: child.pid }] })).toThrow(/PID \d+/);
  });
});
