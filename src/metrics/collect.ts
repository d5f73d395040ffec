// Reads what the metrics need from each namespace through the promise API (never blocking the event
// loop), namespaces one after another (each opens its own netlink sockets). A namespace that cannot be
// read becomes smc_up 0 with the reason kept, never a failed scrape.
import { withPinnedNetnsAsync, type NamespaceTarget } from '../netns';
import * as smc from '../api/promises';
import { buildFamilies, type NamespaceReading } from './families';
import type { MetricFamily } from './model';

export interface MetricsTarget extends NamespaceTarget {
  /** the `netns` label; default: "self", "pid:<PID>" for target, the name or path for netns */
  label?: string;
}

export function labelOf(t: MetricsTarget): string {
  if (t.label) return t.label;
  if (t.target !== undefined) return `pid:${t.target}`;
  return t.netns ?? 'self';
}

function errorOf(e: unknown): { code: string; message: string } {
  const err = e as { code?: unknown; message?: unknown };
  return { code: typeof err.code === 'string' ? err.code : 'EUNKNOWN', message: String(err.message ?? e) };
}

export async function readNamespace(t: MetricsTarget): Promise<NamespaceReading> {
  const start = process.hrtime.bigint();
  const reading: NamespaceReading = { netns: labelOf(t), seconds: 0 };
  try {
    // one handle per scrape: the four readings come from the same namespace even if the PID exits
    await withPinnedNetnsAsync({ target: t.target, netns: t.netns }, async (target) => {
      reading.stats = await smc.getSmcSystemStats(target);
      reading.sockets = await smc.listSmcSockets(target);
      reading.devices = await smc.getSmcDevices(target);
      reading.linkGroups = await smc.getSmcLinkGroups(target);
    });
  } catch (e) {
    reading.error = errorOf(e);
  }
  reading.seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return reading;
}

/** One scrape: every namespace read, then turned into metric families. */
export async function collectSmcMetrics(targets: readonly MetricsTarget[] = [{}]): Promise<MetricFamily[]> {
  const readings: NamespaceReading[] = [];
  for (const t of targets) readings.push(await readNamespace(t));
  return buildFamilies(readings);
}
