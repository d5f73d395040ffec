// The shipped Prometheus rules (ops/prometheus/smc-run.rules.yml): promtool accepts them and their unit
// tests pass (thresholds and `for:` durations on synthetic series), they name only metrics and labels the
// exporter serves, and the short-window copy the guest's live Prometheus loads differs only in durations.
// promtool is Debian's prometheus package: missing, these tests fail and say so.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { promqlReads, promtool, rulesByName, RULES_TEST_YML, RULES_YML, servedMetrics, shortenedRules } from '../helpers/ops';
import { run } from '../helpers/run';

const text = fs.readFileSync(RULES_YML, 'utf8');

describe('ops/prometheus/smc-run.rules.yml', () => {
  it('promtool check rules accepts the 4 recording and 4 alerting rules', async () => {
    const r = await run(promtool(), ['check', 'rules', RULES_YML]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('SUCCESS: 8 rules found');
  });

  it('promtool test rules: every unit test in smc-run.rules.test.yml passes', async () => {
    // promtool resolves rule_files relative to the working directory: run it from the test file's
    const r = await run('sh', ['-c', 'cd "$1" && "$2" test rules "$3"', 'sh', path.dirname(RULES_TEST_YML), promtool(), path.basename(RULES_TEST_YML)]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('SUCCESS');
  });

  it('names only metrics the exporter serves, and only their labels', () => {
    const served = servedMetrics();
    const rules = rulesByName(text);
    // a recording rule's labels: those of the metrics it reads (rules come before their readers)
    const recorded = new Map<string, Set<string>>();
    for (const [name, rule] of rules) {
      const expr = String(rule.expr);
      const { metrics, labels: used } = promqlReads(expr);
      const records = [...expr.matchAll(/(?<![\w:])([a-z_]+:[a-z_]+:[a-z0-9]+)(?![\w:])/g)].map((m) => m[1]!);
      expect(metrics.length + records.length, `${name}: ${expr}`).toBeGreaterThan(0);
      const labels = new Set<string>();
      for (const m of metrics) {
        expect(served.has(m), `${name} uses ${m}, which the exporter does not serve`).toBe(true);
        for (const l of served.get(m)!) labels.add(l);
      }
      for (const r of records) {
        expect(recorded.has(r), `${name} uses ${r}, recorded by no rule before it`).toBe(true);
        for (const l of recorded.get(r)!) labels.add(l);
      }
      for (const l of used) expect(labels.has(l), `${name}: label ${l} is on none of ${[...metrics, ...records].join(', ')}`).toBe(true);
      if (typeof rule.record === 'string') recorded.set(rule.record, labels);
    }
    expect(recorded.size).toBe(4);
  });

  it('the short copy for a live test changes every window and for: and nothing else; promtool accepts it', async () => {
    const short = shortenedRules(text, { window: '30s', forDuration: '15s' });
    const before = rulesByName(text);
    const after = rulesByName(short);
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const [name, rule] of before) {
      const s = after.get(name)!;
      expect(String(s.expr)).not.toMatch(/\[5m\]/);
      expect(String(s.expr).replaceAll('[30s]', '[5m]')).toBe(String(rule.expr));
      if ('for' in rule) expect(s.for).toBe('15s');
      expect({ ...s, expr: rule.expr, for: rule.for }).toEqual(rule);
    }
    expect(String(after.get('netns:smc_fallbacks:rate5m')!.expr)).toContain('[30s]');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-rules-'));
    try {
      fs.writeFileSync(path.join(dir, 'short.yml'), short);
      const r = await run(promtool(), ['check', 'rules', path.join(dir, 'short.yml')]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
