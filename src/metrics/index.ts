// smc-run/metrics: SMC metrics for Prometheus and OpenTelemetry. The exporter (`smc-run stats serve`) and
// a service's own registry (registerPromClient / registerOpenTelemetry) serve the same families.
export { collectSmcMetrics, readNamespace, labelOf, type MetricsTarget } from './collect';
export { buildFamilies, type NamespaceReading } from './families';
export { renderPrometheusText, PROMETHEUS_CONTENT_TYPE } from './text';
export { registerPromClient, registerOpenTelemetry, smcMetricDescriptors, otelName, type SmcMetricsOptions } from './adapters';
export type { MetricFamily, Sample, Labels, MetricType } from './model';
