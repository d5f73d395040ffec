// The shipped Grafana dashboard (ops/grafana/smc-run.json): the generator (scripts/build-dashboard.js over
// ops/grafana/dashboard.ts) gives exactly the committed file, so the two cannot drift; every panel has one
// Prometheus query on the exporter's metrics and labels, valid PromQL once the variables are filled in
// (promtool parses it); and the package ships the dashboard and the rules.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DASHBOARD_JSON, panelQueries, promqlReads, promtool, RULES_YML, servedMetrics } from '../helpers/ops';
import { REPO, run } from '../helpers/run';

const committed = fs.readFileSync(DASHBOARD_JSON, 'utf8');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-dashboard-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Panel {
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: { expr: string; legendFormat: string; refId: string }[];
}
const dashboard = JSON.parse(committed) as { uid: string; panels: Panel[]; templating: { list: { name: string; query: unknown }[] } };
const panels = dashboard.panels.filter((p) => p.type !== 'row');

describe('ops/grafana/smc-run.json', () => {
  it('regenerating it (npm run build:dashboard) gives the committed file, byte for byte', async () => {
    const out = path.join(dir, 'regenerated.json');
    const r = await run(process.execPath, [path.join(REPO, 'scripts', 'build-dashboard.js'), out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(fs.readFileSync(out, 'utf8')).toBe(committed);
  });

  it('has the variables datasource, job, instance, pod, netns and one Prometheus query per panel', () => {
    expect(dashboard.uid).toBe('smc-run');
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(['datasource', 'job', 'instance', 'pod', 'netns']);
    expect(panels.map((p) => p.title)).toEqual([
      'SMC answering (smc_up)', 'Exporter scrapes (up)', 'Time to read a namespace',
      'SMC connections by mode', 'Fallbacks to TCP by reason', 'Fallback ratio', 'Handshake errors',
      'Bytes over SMC', 'Live sockets by mode', 'SMC devices', 'Link groups',
    ]);
    for (const p of panels) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets, p.title).toHaveLength(1);
      // per namespace: every query but Prometheus' own `up` filters on and groups by netns
      if (p.title !== 'Exporter scrapes (up)') {
        expect(p.targets![0]!.expr, p.title).toContain('netns=~"$netns"');
        expect(p.targets![0]!.legendFormat, p.title).toContain('{{netns}}');
      }
    }
  });

  it('each query variable lists a label the exporter serves on its metric; pod narrows netns to the pods\' namespaces', () => {
    const served = servedMetrics();
    const vars = dashboard.templating.list.filter((v) => v.name !== 'datasource');
    for (const v of vars) {
      const m = /^label_values\((\w+)(\{[^}]*\})?, (\w+)\)$/.exec(String(v.query));
      expect(m, `${v.name}: ${String(v.query)}`).not.toBeNull();
      const [, metric, selector = '', label] = m!;
      expect(served.get(metric!)?.has(label!), `${v.name}: ${metric} has no label ${label}`).toBe(true);
      for (const l of promqlReads(`${metric}${selector}`).labels) expect(served.get(metric!)!.has(l), `${v.name}: ${metric} has no label ${l}`).toBe(true);
    }
    // the pod variable's values are netns labels (pod:NS/NAME, container:ID12), so netns filters on them
    expect(vars.find((v) => v.name === 'pod')!.query).toBe('label_values(smc_container_info{job=~"$job",instance=~"$instance"}, netns)');
    expect(String(vars.find((v) => v.name === 'netns')!.query)).toContain('netns=~"$pod"');
  });

  it('queries only metrics the exporter serves, and only their labels', () => {
    const served = servedMetrics();
    for (const p of panels) {
      const expr = p.targets![0]!.expr;
      const { metrics, labels: named } = promqlReads(expr);
      expect(metrics.length, p.title).toBeGreaterThan(0);
      const labels = new Set<string>();
      for (const m of metrics) {
        expect(served.has(m), `${p.title} uses ${m}, which the exporter does not serve`).toBe(true);
        for (const l of served.get(m)!) labels.add(l);
      }
      const used = named.concat([...p.targets![0]!.legendFormat.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!));
      for (const l of used) expect(labels.has(l), `${p.title}: label ${l} is on none of ${metrics.join(', ')}`).toBe(true);
    }
  });

  it('every query, variables filled in, is PromQL promtool accepts', async () => {
    const queries = panelQueries(committed, { job: 'smc-run', instance: '127.0.0.1:9787', netns: 'self', rateInterval: '1m' });
    expect(queries).toHaveLength(panels.length);
    expect(queries[0]!.expr).toContain('instance=~"127\\\\.0\\\\.0\\\\.1:9787"');
    // as recording rules, the one place promtool parses PromQL without a server
    const rules = `groups:\n  - name: panels\n    rules:\n${queries.map((q, i) => `      - record: panel:q${i}:x\n        expr: ${JSON.stringify(q.expr)}\n`).join('')}`;
    const file = path.join(dir, 'panels.yml');
    fs.writeFileSync(file, rules);
    const r = await run(promtool(), ['check', 'rules', file]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`SUCCESS: ${panels.length} rules found`);
  });

  it('npm pack ships the dashboard and the rules, and not their sources or tests', async () => {
    const r = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {}, { timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const files = (JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path).filter((f) => f.startsWith('ops/'));
    expect(files.sort()).toEqual([path.relative(REPO, DASHBOARD_JSON), path.relative(REPO, RULES_YML)].sort());
  });
});
