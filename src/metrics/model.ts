// The metric model every output shares: the `stats serve` exporter's text, prom-client and OpenTelemetry.
// Names follow Prometheus' conventions: one prefix (smc_), base units in the name (_bytes, _seconds),
// `_total` for counters, labels only for dimensions with few values (never PIDs).

export type MetricType = 'counter' | 'gauge';
export type Labels = Record<string, string>;

export interface Sample {
  labels: Labels;
  value: number;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: MetricType;
  /** the label names every sample carries, in order */
  labelNames: readonly string[];
  samples: Sample[];
}

/** Builds families by name while samples are added (declaration order is output order). */
export class FamilySet {
  private readonly byName = new Map<string, MetricFamily>();

  declare(name: string, type: MetricType, help: string, labelNames: readonly string[]): void {
    if (this.byName.has(name)) return;
    if (type === 'counter' && !name.endsWith('_total')) throw new Error(`counter ${name} must end in _total`);
    this.byName.set(name, { name, help, type, labelNames, samples: [] });
  }

  add(name: string, labels: Labels, value: number): void {
    const f = this.byName.get(name);
    if (!f) throw new Error(`metric ${name} not declared`);
    f.samples.push({ labels, value });
  }

  families(): MetricFamily[] {
    return [...this.byName.values()];
  }
}
