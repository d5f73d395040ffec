// The same metrics inside a Node service, for the registries it already has: prom-client and an
// OpenTelemetry Meter. Both are optional peer dependencies, used only through the objects the caller
// passes in (structural types below): nothing here loads them, and the preload never loads this module.
import { hookStats } from '../index';
import type { MetricsTarget } from './collect';
import { buildFamilies, buildShimFamilies, type NamespaceReading } from './families';
import { NamespaceReader } from './namespace-reader';
import { sharedWhileRunning } from './shared-call';
import type { MetricFamily, MetricType } from './model';

export interface SmcMetricsOptions {
  /** namespaces to read; default: the process's own */
  targets?: MetricsTarget[];
}

/**
 * The targets' namespaces, each opened once when the metrics are registered (a --target PID is resolved
 * then and never again: a PID that exits reports smc_up 0 with reason target_exited, never the namespace
 * its number names later), and one collection shared by every reader that asks while it runs (a registry
 * asks once per metric): the namespaces' SMC metrics plus this process's shim counters.
 */
function sharedCollector(targets: readonly MetricsTarget[]): { collect: () => Promise<MetricFamily[]>; close: () => void } {
  const readers: NamespaceReader[] = [];
  try {
    for (const t of targets) readers.push(NamespaceReader.open(t));
  } catch (e) {
    for (const r of readers) r.close();
    throw e;
  }
  return {
    collect: sharedWhileRunning(async () => {
      const readings: NamespaceReading[] = [];
      for (const r of readers) readings.push(await r.read());
      return [...buildFamilies(readings), ...buildShimFamilies(hookStats())];
    }),
    close: () => {
      for (const r of readers) r.close();
    },
  };
}

/** The metric names and types the in-process adapters register (the exporter's, plus the shim's own). */
export function smcMetricDescriptors(): { name: string; help: string; type: MetricType; labelNames: readonly string[] }[] {
  return [...buildFamilies([]), ...buildShimFamilies(undefined)].map(({ name, help, type, labelNames }) => ({ name, help, type, labelNames }));
}

/** What prom-client's Registry needs of a metric (prom-client 14+: registerMetric, get()). */
interface PromRegistryLike {
  registerMetric(metric: unknown): void;
  removeSingleMetric?(name: string): void;
}

/**
 * Registers smc-run's metrics with a prom-client Registry (e.g. `require('prom-client').register`): each
 * scrape of the registry reads the kernel once, off the event loop. A target that is not there throws now
 * (a TargetError, one line). Returns a function that removes them and closes the namespaces.
 */
export function registerPromClient(registry: PromRegistryLike, options: SmcMetricsOptions = {}): () => void {
  const { collect, close } = sharedCollector(options.targets ?? [{}]);
  const names: string[] = [];
  for (const d of smcMetricDescriptors()) {
    names.push(d.name);
    registry.registerMetric({
      name: d.name,
      help: d.help,
      type: d.type,
      aggregator: 'sum',
      labelNames: d.labelNames,
      async get() {
        const family = (await collect()).find((f) => f.name === d.name);
        return { name: d.name, help: d.help, type: d.type, aggregator: 'sum', values: (family?.samples ?? []).map((s) => ({ labels: s.labels, value: s.value })) };
      },
      reset() {},
    });
  }
  return () => {
    for (const n of names) registry.removeSingleMetric?.(n);
    close();
  };
}

/** What an OpenTelemetry Meter (@opentelemetry/api 1.x) offers for observable instruments. */
interface ObservableLike {
  readonly __observable?: never;
}
interface BatchObserverLike {
  observe(instrument: ObservableLike, value: number, attributes?: Record<string, string>): void;
}
interface MeterLike {
  createObservableCounter(name: string, options?: { description?: string; unit?: string }): ObservableLike;
  createObservableGauge(name: string, options?: { description?: string; unit?: string }): ObservableLike;
  addBatchObservableCallback(cb: (observer: BatchObserverLike) => Promise<void> | void, instruments: ObservableLike[]): void;
  removeBatchObservableCallback(cb: (observer: BatchObserverLike) => Promise<void> | void, instruments: ObservableLike[]): void;
}

/** OpenTelemetry's names: counters without Prometheus' `_total` (exporters add it), units as UCUM codes. */
export function otelName(name: string, type: MetricType): { name: string; unit: string } {
  const base = type === 'counter' ? name.replace(/_total$/, '') : name;
  const unit = /_bytes$/.test(base) ? 'By' : /_seconds$/.test(base) ? 's' : '1';
  return { name: base, unit };
}

/**
 * Registers smc-run's metrics as observable instruments of an OpenTelemetry Meter: counters as observable
 * counters, the rest as observable gauges, all observed by one batch callback per collection. Returns a
 * function that removes the callback.
 */
export function registerOpenTelemetry(meter: MeterLike, options: SmcMetricsOptions = {}): () => void {
  const { collect, close } = sharedCollector(options.targets ?? [{}]);
  const instruments = new Map<string, ObservableLike>();
  for (const d of smcMetricDescriptors()) {
    const { name, unit } = otelName(d.name, d.type);
    const opts = { description: d.help, unit };
    instruments.set(d.name, d.type === 'counter' ? meter.createObservableCounter(name, opts) : meter.createObservableGauge(name, opts));
  }
  const callback = async (observer: BatchObserverLike): Promise<void> => {
    for (const f of await collect()) {
      const inst = instruments.get(f.name);
      if (inst) for (const s of f.samples) observer.observe(inst, s.value, s.labels);
    }
  };
  const list = [...instruments.values()];
  meter.addBatchObservableCallback(callback, list);
  return () => {
    meter.removeBatchObservableCallback(callback, list);
    close();
  };
}
