// The Grafana dashboard of `smc-run stats serve`, as code (Grafana's foundation SDK). `npm run
// build:dashboard` writes it to ops/grafana/smc-run.json, the file the package ships and operators import;
// test/unit/ops-dashboard.test.ts fails when the two differ. Every query filters on the dashboard's
// variables (job, instance, pod, netns) and shows one line per network namespace.
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as common from '@grafana/grafana-foundation-sdk/common';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import * as stat from '@grafana/grafana-foundation-sdk/stat';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';

const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };
/** the selector every query carries */
const SEL = 'job=~"$job",instance=~"$instance",netns=~"$netns"';
const rate = (metric: string, extra = ''): string => `rate(${metric}{${SEL}${extra}}[$__rate_interval])`;

interface PanelSpec {
  title: string;
  description: string;
  expr: string;
  legend: string;
  unit: string;
  width: number;
  kind?: 'stat' | 'timeseries';
  stacked?: boolean;
  /** a 0/1 gauge: shown as down (red) / up (green) */
  upDown?: boolean;
}

const UP_DOWN: dashboard.ValueMapping = {
  type: dashboard.MappingType.ValueToText,
  options: { 0: { text: 'down', color: 'red', index: 0 }, 1: { text: 'up', color: 'green', index: 1 } },
};

/** The panels in order, row by row; exported so that tests can name what they evaluate. */
export const ROWS: { title: string; panels: PanelSpec[] }[] = [
  {
    title: 'Health',
    panels: [
      {
        title: 'SMC answering (smc_up)',
        description: '1 when the SMC generic netlink family answered in the namespace; 0: no SMC in the kernel, no privilege, or the namespace is gone.',
        expr: `min by (netns) (smc_up{${SEL}})`,
        legend: '{{netns}}',
        unit: 'none',
        width: 8,
        kind: 'stat',
        upDown: true,
      },
      {
        title: 'Exporter scrapes (up)',
        description: "Prometheus' own record of the scrapes of `smc-run stats serve`: 0 when a scrape failed.",
        expr: 'up{job=~"$job",instance=~"$instance"}',
        legend: '{{instance}}',
        unit: 'none',
        width: 8,
        kind: 'stat',
        upDown: true,
      },
      {
        title: 'Time to read a namespace',
        description: 'How long the exporter took to read the namespace for the scrape.',
        expr: `max by (netns) (smc_scrape_duration_seconds{${SEL}})`,
        legend: '{{netns}}',
        unit: 's',
        width: 8,
        kind: 'stat',
      },
    ],
  },
  {
    title: 'Connections',
    panels: [
      {
        title: 'SMC connections by mode',
        description: 'Connections that completed the SMC handshake per second, SMC-D (smcd) and SMC-R (smcr); each end counts in its own namespace.',
        expr: `sum by (netns, mode) (${rate('smc_handshakes_total')})`,
        legend: '{{netns}} {{mode}}',
        unit: 'cps',
        width: 12,
      },
      {
        title: 'Fallbacks to TCP by reason',
        description: 'Connections that fell back to TCP per second, by side and kernel reason (PEERNOSMC: the peer does not speak SMC).',
        expr: `sum by (netns, side, reason) (${rate('smc_fallback_reasons_total')})`,
        legend: '{{netns}} {{side}} {{reason}}',
        unit: 'cps',
        width: 12,
      },
      {
        title: 'Fallback ratio',
        description: 'Of the connections that tried SMC, the share that ended on TCP (the SmcFallbackSurge alert watches this).',
        expr: `sum by (netns) (${rate('smc_fallbacks_total')}) / (sum by (netns) (${rate('smc_fallbacks_total')}) + sum by (netns) (${rate('smc_handshakes_total')}))`,
        legend: '{{netns}}',
        unit: 'percentunit',
        width: 12,
      },
      {
        title: 'Handshake errors',
        description: 'SMC handshakes per second that ended in an error: the connect or accept failed, with no fallback.',
        expr: `sum by (netns, side) (${rate('smc_handshake_errors_total')})`,
        legend: '{{netns}} {{side}}',
        unit: 'cps',
        width: 12,
      },
    ],
  },
  {
    title: 'Traffic and sockets',
    panels: [
      {
        title: 'Bytes over SMC',
        description: 'Bytes per second over SMC by mode and direction (an echo counts at both ends).',
        expr: `sum by (netns, mode, direction) (${rate('smc_bytes_total')})`,
        legend: '{{netns}} {{mode}} {{direction}}',
        unit: 'Bps',
        width: 12,
      },
      {
        title: 'Live sockets by mode',
        description: 'SMC sockets now: smcd, smcr, fallback (on TCP) and listening.',
        expr: `sum by (netns, mode) (smc_sockets{${SEL}})`,
        legend: '{{netns}} {{mode}}',
        unit: 'none',
        width: 12,
        stacked: true,
      },
      {
        title: 'SMC devices',
        description: 'SMC-D (ISM), SMC-R (RDMA) devices, and loopback-ism (1 when present).',
        expr: `sum by (netns, type) (smc_devices{${SEL}})`,
        legend: '{{netns}} {{type}}',
        unit: 'none',
        width: 12,
        kind: 'stat',
      },
      {
        title: 'Link groups',
        description: 'SMC link groups by mode (the kernel lists the whole host\'s, whatever the namespace).',
        expr: `sum by (netns, mode) (smc_link_groups{${SEL}})`,
        legend: '{{netns}} {{mode}}',
        unit: 'none',
        width: 12,
        kind: 'stat',
      },
    ],
  },
];

function panel(p: PanelSpec, id: number): stat.PanelBuilder | timeseries.PanelBuilder {
  const target = new DataqueryBuilder().expr(p.expr).legendFormat(p.legend).refId('A');
  if (p.kind === 'stat') {
    const s = new stat.PanelBuilder()
      .id(id).title(p.title).description(p.description).datasource(DATASOURCE).withTarget(target)
      .unit(p.unit).height(6).span(p.width)
      .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']))
      .colorMode(common.BigValueColorMode.Value).graphMode(common.BigValueGraphMode.None);
    return p.upDown ? s.mappings([UP_DOWN]) : s;
  }
  const ts = new timeseries.PanelBuilder()
    .id(id).title(p.title).description(p.description).datasource(DATASOURCE).withTarget(target)
    .unit(p.unit).min(0).height(8).span(p.width).fillOpacity(10);
  return p.stacked ? ts.stacking(new common.StackingConfigBuilder().mode(common.StackingMode.Normal)) : ts;
}

function labelVariable(name: string, label: string, query: string): dashboard.QueryVariableBuilder {
  return new dashboard.QueryVariableBuilder(name)
    .label(label).datasource(DATASOURCE).query(query).definition(query)
    .refresh(dashboard.VariableRefresh.OnTimeRangeChanged).sort(dashboard.VariableSort.AlphabeticalAsc)
    .multi(true).includeAll(true).allValue('.*').current({ selected: true, text: ['All'], value: ['$__all'] });
}

export function buildDashboard(): dashboard.Dashboard {
  const b = new dashboard.DashboardBuilder('smc-run: SMC connections')
    .uid('smc-run')
    .description('SMC-D and SMC-R connections, fallbacks to TCP, handshake errors, bytes and live sockets per network namespace, from `smc-run stats serve`.')
    .tags(['smc', 'smc-run'])
    .editable()
    .refresh('30s')
    .time({ from: 'now-1h', to: 'now' })
    .tooltip(dashboard.DashboardCursorSync.Crosshair)
    .withVariable(new dashboard.DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'))
    .withVariable(labelVariable('job', 'Job', 'label_values(smc_up, job)'))
    .withVariable(labelVariable('instance', 'Instance', 'label_values(smc_up{job=~"$job"}, instance)'))
    // a pod (or a container outside Kubernetes) is the namespace the OCI hook switched for it, named in
    // the netns label (`pod:NAMESPACE/NAME`, `container:ID12`) of `stats serve --containers`; picking one
    // narrows the namespaces to it, All leaves every namespace
    .withVariable(labelVariable('pod', 'Pod or container', 'label_values(smc_container_info{job=~"$job",instance=~"$instance"}, netns)'))
    .withVariable(labelVariable('netns', 'Network namespace', 'label_values(smc_up{job=~"$job",instance=~"$instance",netns=~"$pod"}, netns)'));
  let id = 0;
  for (const row of ROWS) {
    b.withRow(new dashboard.RowBuilder(row.title).id(++id));
    for (const p of row.panels) b.withPanel(panel(p, ++id));
  }
  return b.build();
}

/** The file's text: two-space JSON with a final newline. */
export function dashboardJson(): string {
  return `${JSON.stringify(buildDashboard(), null, 2)}\n`;
}
