// `stats serve --containers`: the network namespaces the OCI hook switched (src/oci/records.ts), found
// again at each scrape. A namespace seen for the first time is opened once (by its /run/netns name when it
// has one, else through one of its processes) and kept while a record names it; a namespace whose records
// are gone is closed. Its `netns` label is the pod (`pod:NAMESPACE/NAME`, from CRI-O's annotations) or the
// container (`container:ID12`), and smc_container_info{netns, container_id, pod, pod_namespace, container}
// names every container in it, for PromQL joins (as kube-state-metrics' *_info series): the metrics keep
// their one `netns` label, and a pod's many containers cost one reading of their shared namespace.
import { allRecords, type HookRecord } from '../oci/records';
import { netnsMembers } from '../proc/netns-members';
import { FamilySet, type MetricFamily } from './model';
import { NamespaceReader } from './namespace-reader';

interface Tracked {
  reader: NamespaceReader;
  records: HookRecord[];
}

/** the labels of smc_container_info (the dashboard's pod variable reads its netns) */
export const CONTAINER_INFO_LABELS = ['netns', 'container_id', 'pod', 'pod_namespace', 'container'] as const;
const labelFor = (r: HookRecord): string => (r.pod?.name !== undefined ? `pod:${r.pod.namespace ?? '-'}/${r.pod.name}` : `container:${r.id.slice(0, 12)}`);

export class ContainerNamespaces {
  private readonly tracked = new Map<string, Tracked>(); // by namespace cookie

  /** skip: namespaces the exporter reads already (its --target/--netns), by inode */
  constructor(
    private readonly skip: ReadonlySet<number>,
    private readonly recordsDir?: string,
  ) {}

  /** The readers for the namespaces recorded now: new ones opened, those no record names any more closed. */
  refresh(): NamespaceReader[] {
    // the recorded namespaces by cookie: their inode and their containers' records
    const now = new Map<string, { inode: number; records: HookRecord[] }>();
    for (const r of allRecords(this.recordsDir)) {
      if (r.scope.kind !== 'netns' || r.scope.cookie === '' || this.skip.has(r.scope.inode)) continue;
      const entry = now.get(r.scope.cookie) ?? { inode: r.scope.inode, records: [] };
      entry.records.push(r);
      now.set(r.scope.cookie, entry);
    }
    for (const e of now.values()) e.records.sort((a, b) => a.id.localeCompare(b.id));
    for (const [cookie, t] of this.tracked) {
      if (!now.has(cookie) || t.reader.goneReason !== undefined) {
        t.reader.close();
        this.tracked.delete(cookie);
      }
    }
    const fresh = [...now.entries()].filter(([cookie]) => !this.tracked.has(cookie));
    const members = fresh.length > 0 ? netnsMembers(new Set(fresh.map(([, e]) => e.inode)), 0) : new Map();
    for (const [cookie, { inode, records }] of fresh) {
      const m = members.get(inode);
      const name = m?.names[0];
      const pid = m?.pids[0];
      if (name === undefined && pid === undefined) continue; // no process holds it any more: poststop comes
      try {
        const reader = NamespaceReader.open({ ...(name !== undefined ? { netns: `/run/netns/${name}` } : { target: pid }), label: labelFor(records[0]!) });
        if (reader.inode === inode) this.tracked.set(cookie, { reader, records });
        else reader.close(); // the name or process moved on meanwhile
      } catch {
        /* gone meanwhile: the next scrape looks again */
      }
    }
    for (const [cookie, t] of this.tracked) t.records = now.get(cookie)?.records ?? [];
    return [...this.tracked.values()].map((t) => t.reader);
  }

  /** smc_container_info: one sample per recorded container of the namespaces read. */
  info(): MetricFamily {
    const f = new FamilySet();
    f.declare('smc_container_info', 'gauge', 'A container the OCI hook switched (smc-run oci-hook), in the namespace its netns label names: 1. pod, pod_namespace and container are Kubernetes\' names where CRI-O passed them, else empty.', [...CONTAINER_INFO_LABELS]);
    for (const t of this.tracked.values()) {
      for (const r of t.records) f.add('smc_container_info', { netns: t.reader.label, container_id: r.id, pod: r.pod?.name ?? '', pod_namespace: r.pod?.namespace ?? '', container: r.pod?.container ?? '' }, 1);
    }
    return f.families()[0]!;
  }

  close(): void {
    for (const t of this.tracked.values()) t.reader.close();
    this.tracked.clear();
  }
}
