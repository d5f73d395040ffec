// The metric families on replies recorded from a real 6.12 kernel (SMC-D guest: a 1 MiB echo, one plain
// client each way), their Prometheus text, and the prom-client and OpenTelemetry adapters serving the same
// families. Live collection says smc_up 0 on a host without SMC, 1 on a host with it.
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { buildShimFamilies } from '../../src/metrics/families';
import { buildFamilies, otelName, registerOpenTelemetry, registerPromClient, renderPrometheusText, smcMetricDescriptors, type NamespaceReading } from '../../src/metrics';
import { parseSmcDiagMessage } from '../../src/netlink/sockdiag';
import { toSocketInfo } from '../../src/stats/sockets';
import { parseSystemStats } from '../../src/stats/system';
import { sockDiagPayloads } from '../helpers/byte-orders';
import { HOST_HAS_SMC } from '../helpers/host-smc';
import { messages } from '../helpers/genl-fixtures';

function recordedReading(): NamespaceReading {
  return {
    netns: 'self',
    stats: parseSystemStats(messages('get-stats'), messages('get-fback-stats')),
    sockets: sockDiagPayloads('smcd-6.12').map((p) => toSocketInfo(parseSmcDiagMessage(p))),
    devices: { smcd: [], smcr: [], ismV2: true, loopbackIsm: true, dibs: null },
    linkGroups: { smcd: [], smcr: [] },
    seconds: 0.004,
  };
}

/** sample lines of the text format as "name{labels} value" */
const samples = (text: string): string[] => text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));

describe('metric families from recorded replies', () => {
  const text = renderPrometheusText(buildFamilies([recordedReading()]));
  const lines = samples(text);
  const value = (series: string): number | undefined => {
    const l = lines.find((x) => x.startsWith(`${series} `));
    return l === undefined ? undefined : Number(l.slice(series.length + 1));
  };

  it('counts the echo: one SMC-D v2 handshake per side and 2 MiB each way', () => {
    expect(value('smc_up{netns="self"}')).toBe(1);
    expect(value('smc_handshakes_total{netns="self",mode="smcd",side="client",version="v2"}')).toBe(1);
    expect(value('smc_handshakes_total{netns="self",mode="smcd",side="server",version="v2"}')).toBe(1);
    expect(value('smc_handshakes_total{netns="self",mode="smcr",side="client",version="v2"}')).toBe(0);
    expect(value('smc_bytes_total{netns="self",mode="smcd",direction="rx"}')).toBe(2 << 20);
    expect(value('smc_bytes_total{netns="self",mode="smcd",direction="tx"}')).toBe(2 << 20);
  });

  it('fallbacks by side and by reason, with the reason in words and its code', () => {
    expect(value('smc_fallbacks_total{netns="self",side="client"}')).toBe(1);
    expect(value('smc_fallbacks_total{netns="self",side="server"}')).toBe(1);
    expect(value('smc_fallback_reasons_total{netns="self",side="server",reason="PEERNOSMC",code="0x03010000"}')).toBe(1);
  });

  it('live sockets by mode and fallback reason', () => {
    expect(value('smc_sockets{netns="self",mode="smcd",reason=""}')).toBe(4);
    expect(value('smc_sockets{netns="self",mode="listening",reason=""}')).toBe(2);
    expect(value('smc_sockets{netns="self",mode="fallback",reason="PEERNOSMC"}')).toBe(1);
    expect(value('smc_sockets{netns="self",mode="smcr",reason=""}')).toBe(0);
    expect(value('smc_devices{netns="self",type="loopback_ism"}')).toBe(1);
  });

  it('follows the naming rules: one prefix, _total on counters only, base units, HELP and TYPE once', () => {
    for (const d of smcMetricDescriptors()) {
      expect(d.name).toMatch(/^smc_[a-z0-9_]+$/);
      expect(d.name.endsWith('_total')).toBe(d.type === 'counter');
      expect(d.name).not.toMatch(/_(kb|kib|mb|ms|milliseconds)(_|$)/);
    }
    for (const d of buildFamilies([])) expect(text.split('\n').filter((l) => l === `# TYPE ${d.name} ${d.type}`)).toHaveLength(1);
  });

  it('a namespace that could not be read is smc_up 0 with its reason, and nothing else', () => {
    const t = renderPrometheusText(buildFamilies([{ netns: 'pid:42', error: { code: 'ENOSMC', message: 'no SMC' }, seconds: 0.001 }]));
    expect(samples(t).filter((l) => !l.startsWith('smc_scrape_duration_seconds'))).toEqual(['smc_up{netns="pid:42"} 0', 'smc_down_reason{netns="pid:42",reason="no_smc",code="ENOSMC"} 1']);
    const gone = renderPrometheusText(buildFamilies([{ netns: 'pid:42', error: { code: 'ESRCH', message: 'PID 42 exited', reason: 'target_exited' }, seconds: 0 }]));
    expect(samples(gone)).toContain('smc_down_reason{netns="pid:42",reason="target_exited",code="ESRCH"} 1');
    const denied = renderPrometheusText(buildFamilies([{ netns: 'x', error: { code: 'EPERM', message: 'no' }, seconds: 0 }]));
    expect(samples(denied)).toContain('smc_down_reason{netns="x",reason="not_permitted",code="EPERM"} 1');
  });

  it('escapes label values', () => {
    const t = renderPrometheusText(buildFamilies([{ netns: 'a"b\\c\nd', seconds: 0 }]));
    expect(t).toContain('smc_up{netns="a\\"b\\\\c\\nd"} 0');
  });
});

describe('in-process adapters', () => {
  it('the shim counters of this process: sockets by result and TCP retries', () => {
    const text = renderPrometheusText(buildShimFamilies({ smc: 7, excluded: 2, unavailable: 0, errors: 1, byOp: {}, tcpRetries: 3 }));
    expect(samples(text)).toEqual([
      'smc_run_sockets_total{result="smc"} 7', 'smc_run_sockets_total{result="excluded"} 2',
      'smc_run_sockets_total{result="unavailable"} 0', 'smc_run_sockets_total{result="error"} 1', 'smc_run_tcp_retries_total 3',
    ]);
  });

  const up = HOST_HAS_SMC ? 1 : 0;
  it(`prom-client: the same families, read live (smc_up ${up} on a kernel ${HOST_HAS_SMC ? 'with' : 'without'} SMC)`, async () => {
    const registry = new Registry();
    const unregister = registerPromClient(registry);
    const text = await registry.metrics();
    for (const d of smcMetricDescriptors()) expect(text).toContain(`# TYPE ${d.name} ${d.type}`);
    expect(samples(text)).toContain(`smc_up{netns="self"} ${up}`);
    // this test process never enabled the hook: the shim's families are declared, without samples
    expect(text).toContain('# TYPE smc_run_tcp_retries_total counter');
    unregister();
    expect(await registry.metrics()).not.toContain('smc_up');
  });

  it('OpenTelemetry: observable counters and gauges with the same values', async () => {
    class Reader extends MetricReader {
      protected async onForceFlush(): Promise<void> {}
      protected async onShutdown(): Promise<void> {}
    }
    const reader = new Reader();
    const provider = new MeterProvider({ readers: [reader] });
    const unregister = registerOpenTelemetry(provider.getMeter('smc-run-test'));
    const { resourceMetrics } = await reader.collect();
    const metrics = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    const smcUp = metrics.find((m) => m.descriptor.name === 'smc_up');
    expect(smcUp?.dataPoints.map((p) => [p.attributes, p.value])).toEqual([[{ netns: 'self' }, up]]);
    expect(otelName('smc_bytes_total', 'counter')).toEqual({ name: 'smc_bytes', unit: 'By' });
    expect(metrics.find((m) => m.descriptor.name === 'smc_scrape_duration_seconds')?.descriptor.unit).toBe('s');
    unregister();
    await provider.shutdown();
  });
});
