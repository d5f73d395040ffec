// What smc-run exports, from the typed stats of one or more network namespaces: the namespace's SMC
// counters (connections, bytes, calls, buffer events, fallbacks by reason, handshake errors), live sockets
// by mode and fallback reason, devices and link groups, and whether SMC answered at all. The `netns` label
// tells namespaces apart. Pure: tested on recorded kernel replies.
import type { SmcDevices, SmcLinkGroups } from '../api/system';
import type { HookStats } from '../hook/stats';
import type { SmcSocketInfo } from '../stats/sockets';
import { SIZE_BUCKETS, type SmcSystemStats, type TechStats } from '../stats/system';
import { FamilySet, type MetricFamily } from './model';

/** Everything read from one namespace for one scrape; a part that could not be read is undefined. */
export interface NamespaceReading {
  /** the `netns` label: "self" for the caller's own namespace, else what the user named */
  netns: string;
  stats?: SmcSystemStats | undefined;
  sockets?: SmcSocketInfo[] | undefined;
  devices?: SmcDevices | undefined;
  linkGroups?: SmcLinkGroups | undefined;
  /** why the namespace could not be read (SMC absent, no privilege, namespace gone); reason: see reasonOf */
  error?: { code: string; message: string; reason?: string | undefined } | undefined;
  seconds: number;
}

const MODES = [['smcd', 'smcd'], ['smcr', 'smcr']] as const;
const DIRECTIONS = ['rx', 'tx'] as const;

function declareAll(f: FamilySet): void {
  const ns = ['netns'];
  const tech = ['netns', 'mode'];
  f.declare('smc_up', 'gauge', '1 when the SMC generic netlink family of the namespace answered, 0 when it did not (no SMC in the kernel, no privilege, namespace gone).', ns);
  f.declare('smc_down_reason', 'gauge', 'Why smc_up is 0: 1 for the namespace\'s reason (no_smc, not_permitted, target_exited: the --target process is gone, netns_gone: the --netns path was removed or re-created, error), code = the error\'s code. Absent while smc_up is 1.', [...ns, 'reason', 'code']);
  f.declare('smc_scrape_duration_seconds', 'gauge', 'Time taken to read the namespace for this scrape.', ns);
  f.declare('smc_handshakes_total', 'counter', 'Connections that completed the SMC handshake, by SMC mode, side and SMC version.', [...tech, 'side', 'version']);
  f.declare('smc_handshake_errors_total', 'counter', 'SMC handshakes that ended in an error (the connect or accept failed, no fallback), by side.', [...ns, 'side']);
  f.declare('smc_fallbacks_total', 'counter', 'Connections that fell back to TCP, by side (exact).', [...ns, 'side']);
  f.declare('smc_fallback_reasons_total', 'counter', 'Fallbacks to TCP by side and reason (the kernel counts each reason in 16 bits: once a side has 65536 fallbacks, these wrap).', [...ns, 'side', 'reason', 'code']);
  f.declare('smc_bytes_total', 'counter', 'Bytes moved over SMC, by mode and direction (an echo counts at both ends).', [...tech, 'direction']);
  f.declare('smc_data_calls_total', 'counter', 'Send (tx) and receive (rx) calls on SMC connections.', [...tech, 'direction']);
  f.declare('smc_option_calls_total', 'counter', 'Calls that change how data is sent: cork, nodelay, splice, sendpage, urgent.', [...tech, 'call']);
  f.declare('smc_buffer_events_total', 'counter', 'Buffer events by direction: alloc, reuse, downgrade (smaller than wanted), full, peer_full, size_small, peer_size_small.', [...tech, 'direction', 'event']);
  f.declare('smc_buffers_by_size_total', 'counter', 'Buffers created, by direction and size bucket (tx: send buffers, rx: receive buffers).', [...tech, 'direction', 'size']);
  f.declare('smc_payloads_by_size_total', 'counter', 'Sends (tx) and receives (rx) by size bucket.', [...tech, 'direction', 'size']);
  f.declare('smc_buffer_usage_bytes', 'gauge', 'Bytes in the SMC buffers now, by direction (kernels 6.10 and later).', [...tech, 'direction']);
  f.declare('smc_sockets', 'gauge', 'Live SMC sockets by mode (smcd, smcr, fallback, listening) and fallback reason ("" unless fallback).', [...ns, 'mode', 'reason']);
  f.declare('smc_devices', 'gauge', 'SMC devices: smcd (ISM), smcr (RDMA), loopback_ism (1 when present).', [...ns, 'type']);
  f.declare('smc_link_groups', 'gauge', 'SMC link groups by mode (the kernel lists the whole host\'s, whatever the namespace).', [...ns, 'mode']);
  f.declare('smc_links', 'gauge', 'SMC-R links of all link groups.', ns);
}

function addTech(f: FamilySet, netns: string, mode: string, t: TechStats): void {
  const l = { netns, mode };
  for (const [side, v1, v2] of [['client', t.connections.clientV1, t.connections.clientV2], ['server', t.connections.serverV1, t.connections.serverV2]] as const) {
    f.add('smc_handshakes_total', { ...l, side, version: 'v1' }, v1);
    f.add('smc_handshakes_total', { ...l, side, version: 'v2' }, v2);
  }
  for (const d of DIRECTIONS) {
    f.add('smc_bytes_total', { ...l, direction: d }, t.bytes[d]);
    f.add('smc_data_calls_total', { ...l, direction: d }, t.requests[d]);
    const b = t.buffers[d];
    for (const [event, v] of [
      ['alloc', b.alloc], ['reuse', b.reuse], ['downgrade', b.downgrade], ['full', b.full], ['peer_full', b.peerFull],
      ['size_small', b.sizeSmall], ['peer_size_small', b.peerSizeSmall],
    ] as const) {
      f.add('smc_buffer_events_total', { ...l, direction: d, event }, v);
    }
    for (const size of SIZE_BUCKETS) {
      f.add('smc_buffers_by_size_total', { ...l, direction: d, size }, t.bufferSize[d][size]);
      f.add('smc_payloads_by_size_total', { ...l, direction: d, size }, t.payloadSize[d][size]);
    }
    if (t.bufferUsage) f.add('smc_buffer_usage_bytes', { ...l, direction: d }, t.bufferUsage[d]);
  }
  for (const [call, v] of Object.entries(t.calls)) f.add('smc_option_calls_total', { ...l, call }, v);
}

/** A few stable words for alerts and dashboards; the code label keeps the detail. */
export function reasonOf(error: NamespaceReading['error']): string {
  if (error?.reason) return error.reason;
  switch (error?.code) {
    case 'ENOSMC': case 'ENOENT': case 'EPROTONOSUPPORT': case 'EAFNOSUPPORT':
      return 'no_smc';
    case 'EPERM': case 'EACCES':
      return 'not_permitted';
    case 'ESRCH':
      return 'target_exited';
    default:
      return 'error';
  }
}

/** The metric families of one scrape over the namespaces read. */
export function buildFamilies(readings: readonly NamespaceReading[]): MetricFamily[] {
  const f = new FamilySet();
  declareAll(f);
  for (const r of readings) {
    const netns = r.netns;
    f.add('smc_up', { netns }, r.stats ? 1 : 0);
    if (!r.stats) {
      const code = r.error?.code ?? 'EUNKNOWN';
      f.add('smc_down_reason', { netns, reason: reasonOf(r.error), code }, 1);
    }
    f.add('smc_scrape_duration_seconds', { netns }, r.seconds);
    const s = r.stats;
    if (s) {
      for (const [mode, key] of MODES) addTech(f, netns, mode, s[key]);
      f.add('smc_handshake_errors_total', { netns, side: 'client' }, s.handshakeErrors.client);
      f.add('smc_handshake_errors_total', { netns, side: 'server' }, s.handshakeErrors.server);
      for (const side of ['client', 'server'] as const) {
        const fb = s.fallbacks[side];
        f.add('smc_fallbacks_total', { netns, side }, fb.total);
        for (const reason of fb.reasons) {
          f.add('smc_fallback_reasons_total', { netns, side, reason: reason.name, code: `0x${reason.code.toString(16).padStart(8, '0')}` }, reason.count);
        }
      }
    }
    if (r.sockets) {
      const counts = new Map<string, { mode: string; reason: string; n: number }>();
      for (const sock of r.sockets) {
        if (sock.state === 'CLOSED') continue;
        const reason = sock.mode === 'fallback' ? (sock.fallback?.name ?? 'unknown') : '';
        const key = `${sock.mode}\0${reason}`;
        const c = counts.get(key) ?? { mode: sock.mode, reason, n: 0 };
        c.n++;
        counts.set(key, c);
      }
      // modes always present, so a dashboard sees 0 rather than a missing series
      for (const mode of ['smcd', 'smcr', 'listening']) if (!counts.has(`${mode}\0`)) counts.set(`${mode}\0`, { mode, reason: '', n: 0 });
      for (const c of [...counts.values()].sort((a, b) => (a.mode + a.reason).localeCompare(b.mode + b.reason))) {
        f.add('smc_sockets', { netns, mode: c.mode, reason: c.reason }, c.n);
      }
    }
    if (r.devices) {
      f.add('smc_devices', { netns, type: 'smcd' }, r.devices.smcd.length);
      f.add('smc_devices', { netns, type: 'smcr' }, r.devices.smcr.length);
      f.add('smc_devices', { netns, type: 'loopback_ism' }, r.devices.loopbackIsm ? 1 : 0);
    }
    if (r.linkGroups) {
      f.add('smc_link_groups', { netns, mode: 'smcd' }, r.linkGroups.smcd.length);
      f.add('smc_link_groups', { netns, mode: 'smcr' }, r.linkGroups.smcr.length);
      f.add('smc_links', { netns }, r.linkGroups.smcr.reduce((n, g) => n + g.links.length, 0));
    }
  }
  return f.families();
}

/**
 * The shim's own counters in this process (this thread's hook): what became of the TCP sockets it saw, and
 * the connects retried over TCP after a failed SMC handshake. Only in-process (prom-client, OpenTelemetry):
 * the exporter runs in another process.
 */
export function buildShimFamilies(stats: HookStats | undefined): MetricFamily[] {
  const f = new FamilySet();
  f.declare('smc_run_sockets_total', 'counter', 'TCP sockets the smc-run hook saw in this process, by result: smc (created as SMC), excluded (policy), unavailable (no SMC for the family), error.', ['result']);
  f.declare('smc_run_tcp_retries_total', 'counter', 'Client connects whose SMC handshake failed and that smc-run retried over plain TCP in this process.', []);
  if (stats) {
    for (const [result, v] of [['smc', stats.smc], ['excluded', stats.excluded], ['unavailable', stats.unavailable], ['error', stats.errors]] as const) {
      f.add('smc_run_sockets_total', { result }, v);
    }
    f.add('smc_run_tcp_retries_total', {}, stats.tcpRetries);
  }
  return f.families();
}
