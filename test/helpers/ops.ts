// The operator's kit as the tests read it: the shipped dashboard's panel queries with its variables
// filled in, the shipped rules with shorter windows for a live Prometheus, and promtool (Debian's
// prometheus package; .ci/run and the kernel harness install it, a missing one fails the test).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDocument, isScalar, visit, type Scalar } from 'yaml';
import { buildFamilies } from '../../src/metrics/families';
import { CONTAINER_INFO_LABELS } from '../../src/metrics/container-namespaces';
import { REPO } from './run';

export const DASHBOARD_JSON = path.join(REPO, 'ops', 'grafana', 'smc-run.json');
export const RULES_YML = path.join(REPO, 'ops', 'prometheus', 'smc-run.rules.yml');
export const RULES_TEST_YML = path.join(REPO, 'ops', 'prometheus', 'smc-run.rules.test.yml');

export interface PanelQuery {
  title: string;
  expr: string;
}

interface DashboardPanel {
  type: string;
  title: string;
  targets?: { expr?: string }[];
}

/**
 * Every query of every panel (rows have none), with the dashboard's variables replaced as Grafana does
 * for one selected value each: job, instance, netns are regexes (=~), rateInterval is $__rate_interval.
 */
export function panelQueries(dashboardText: string, vars: { job: string; instance: string; netns: string; rateInterval: string }): PanelQuery[] {
  const d = JSON.parse(dashboardText) as { panels: DashboardPanel[] };
  const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\\\$&');
  const out: PanelQuery[] = [];
  for (const p of d.panels) {
    if (p.type === 'row') continue;
    for (const t of p.targets ?? []) {
      if (!t.expr) throw new Error(`panel "${p.title}" has a target without an expr`);
      const expr = t.expr
        .replaceAll('$__rate_interval', vars.rateInterval)
        .replaceAll('$job', esc(vars.job))
        .replaceAll('$instance', esc(vars.instance))
        .replaceAll('$netns', esc(vars.netns));
      if (expr.includes('$')) throw new Error(`panel "${p.title}": a variable is left in ${expr}`);
      out.push({ title: p.title, expr });
    }
  }
  return out;
}

/**
 * The rules file with every range window in an expression ([5m]) replaced by `window` and every alert's
 * `for:` by `forDuration`, nothing else changed: a live test cannot wait 10 minutes, and the production
 * durations are what `promtool test rules` checks.
 */
export function shortenedRules(text: string, o: { window: string; forDuration: string }): string {
  const doc = parseDocument(text);
  visit(doc, {
    Pair(_, pair) {
      if (!isScalar(pair.key) || !isScalar(pair.value)) return;
      const v = pair.value as Scalar<string>;
      if (pair.key.value === 'expr') v.value = String(v.value).replace(/\[\d+[smhdwy]\]/g, `[${o.window}]`);
      if (pair.key.value === 'for') v.value = o.forDuration;
    },
  });
  return doc.toString();
}

/** The rules of a rules file by name (alert or record): what tests compare. */
export function rulesByName(text: string): Map<string, Record<string, unknown>> {
  const doc = parseDocument(text).toJS() as { groups: { rules: (Record<string, unknown> & { alert?: string; record?: string })[] }[] };
  const out = new Map<string, Record<string, unknown>>();
  for (const g of doc.groups) for (const r of g.rules) out.set(String(r.alert ?? r.record), r);
  return out;
}

/** promtool's path, or an error that says which package to install. */
export function promtool(): string {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = path.join(dir || '.', 'promtool');
    if (fs.existsSync(p)) return p;
  }
  throw new Error("promtool not found: install Debian's prometheus package (apt-get install prometheus; .ci/run and test/vm/run.sh do)");
}

export function promtoolVersion(): string {
  return execFileSync(promtool(), ['--version'], { encoding: 'utf8' }).split('\n')[0] ?? '';
}

/**
 * What a PromQL expression reads, as far as the kit's checks need it: the exporter's metric names (and
 * `up`) and the labels it names in by/without lists and matchers. `(?:\s*)` rather than `\s*` after the
 * class: under qemu-user on s390x, rolldown's parser (vite's SSR transform) serialises the literal
 * /[{,]\s*([a-z_]+)/ with a NUL in its AST JSON and fails the whole file ("Bad escaped character in
 * JSON"); this spelling was found by trial to pass, with the same meaning.
 */
const MATCHER_LABEL = /[{,](?:\s*)([a-z_]+)\s*=~?/g;
export function promqlReads(expr: string): { metrics: string[]; labels: string[] } {
  const metrics = [...expr.matchAll(/(?<![\w:$])(smc_[a-z_]+|up)(?![\w:(])/g)].map((m) => m[1]!);
  const labels = [...expr.matchAll(/(?:by|without)\s*\(([^)]*)\)/g)].flatMap((m) => m[1]!.split(',').map((x) => x.trim()))
    .concat([...expr.matchAll(MATCHER_LABEL)].map((m) => m[1]!));
  return { metrics, labels };
}

/** metric name -> its labels, as the exporter declares them (plus what Prometheus adds to every series) */
export function servedMetrics(): Map<string, Set<string>> {
  const m = new Map<string, Set<string>>();
  for (const f of buildFamilies([])) m.set(f.name, new Set([...f.labelNames, 'job', 'instance']));
  m.set('smc_exporter_scrapes_total', new Set(['job', 'instance']));
  m.set('smc_container_info', new Set([...CONTAINER_INFO_LABELS, 'job', 'instance']));
  m.set('up', new Set(['job', 'instance']));
  return m;
}
