// Text views of the system statistics, devices, link groups and system info, for people: sections
// with small tables in the style of the other stats commands. JSON output is the objects themselves.
import type { SmcDevices, SmcLinkGroups, SmcSystemInfo } from '../api/system';
import {
  FALLBACK_COUNT_WRAP, SIZE_BUCKETS, type Directions, type FallbackSide, type SmcSystemStats, type TechStats,
} from '../stats/system';
import type { SmcDevice, SmcDevicePort } from '../topology/devices';
import type { DibsDevice } from '../topology/dibs';
import { formatSize } from '../units';
import { renderTable, type Column } from './table';

const indent = (text: string, by = '  '): string =>
  text.split('\n').map((l) => (l ? `${by}${l}` : l)).join('\n');

/** A table from rows of cells: the first column left-aligned (labels), the rest right-aligned. */
function grid(headers: string[], rows: string[][]): string {
  const columns: Column<string[]>[] = headers.map((header, i) => ({ header, value: (r) => r[i] ?? '', align: i === 0 ? 'left' : 'right' }));
  return renderTable(rows, columns);
}

function humanBytes(n: number): string {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = -1;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u < 0 ? `${n}` : `${n} (${v.toFixed(1)} ${units[u]})`;
}

const rxTx = (label: string, d: Directions<number>, fmt: (n: number) => string = String): string[] => [label, fmt(d.rx), fmt(d.tx)];

/** True when nothing happened: every counter zero (levels aside). */
function idle(t: TechStats): boolean {
  const sum = (o: object): number =>
    Object.values(o).reduce<number>((acc, v) => acc + (typeof v === 'number' ? v : v && typeof v === 'object' ? sum(v as object) : 0), 0);
  const { bufferUsage: _levels, ...counters } = t;
  return sum(counters) === 0;
}

function techView(name: string, t: TechStats, delta: boolean): string {
  if (idle(t) && !(t.bufferUsage && (t.bufferUsage.rx || t.bufferUsage.tx))) {
    return `${name}: ${delta ? 'no change' : 'nothing yet (no connection, no data)'}\n`;
  }
  const c = t.connections;
  const parts = [
    grid(['Connections', 'client', 'server'], [
      ['SMCv1', String(c.clientV1), String(c.serverV1)],
      ['SMCv2', String(c.clientV2), String(c.serverV2)],
    ]),
    grid(['Data', 'RX', 'TX'], [
      rxTx('bytes', t.bytes, humanBytes),
      rxTx('requests', t.requests),
      ...(t.bufferUsage ? [rxTx(delta ? 'bytes in buffers now (level)' : 'bytes in buffers now', t.bufferUsage)] : []),
    ]),
    grid(['Buffers', 'RX', 'TX'], [
      ['allocated', String(t.buffers.rx.alloc), String(t.buffers.tx.alloc)],
      ['reused', String(t.buffers.rx.reuse), String(t.buffers.tx.reuse)],
      ['smaller than wanted', String(t.buffers.rx.downgrade), String(t.buffers.tx.downgrade)],
      ['found full', String(t.buffers.rx.full), String(t.buffers.tx.full)],
      ['found peer buffer full', String(t.buffers.rx.peerFull), String(t.buffers.tx.peerFull)],
      ['call larger than buffer', String(t.buffers.rx.sizeSmall), String(t.buffers.tx.sizeSmall)],
      ['call larger than peer buffer', String(t.buffers.rx.peerSizeSmall), String(t.buffers.tx.peerSizeSmall)],
    ]),
    grid(['Sizes', ...SIZE_BUCKETS], [
      ['RX buffers', ...SIZE_BUCKETS.map((b) => String(t.bufferSize.rx[b]))],
      ['TX buffers', ...SIZE_BUCKETS.map((b) => String(t.bufferSize.tx[b]))],
      ['RX payloads', ...SIZE_BUCKETS.map((b) => String(t.payloadSize.rx[b]))],
      ['TX payloads', ...SIZE_BUCKETS.map((b) => String(t.payloadSize.tx[b]))],
    ]),
    `Calls: cork ${t.calls.cork}, nodelay ${t.calls.nodelay}, splice ${t.calls.splice}, sendpage ${t.calls.sendpage}, urgent data ${t.calls.urgent}\n`,
  ];
  return `${name}\n${parts.map((p) => indent(p)).join('')}`;
}

function wrapNote(side: string, s: FallbackSide, delta: boolean): string {
  if (!s.countsWrap) return '';
  return `  (${side}: ${s.total} fallbacks ${delta ? 'in this interval' : 'in all'}; the kernel counts each reason in 16 bits, so the counts by reason are modulo ${FALLBACK_COUNT_WRAP}; the total is exact)\n`;
}

function fallbackView(s: SmcSystemStats, delta: boolean): string {
  const { client, server } = s.fallbacks;
  let out = `Fallbacks to TCP: client ${client.total}, server ${server.total}\n`;
  const rows = [
    ...server.reasons.map((r) => ({ side: 'server', ...r })),
    ...client.reasons.map((r) => ({ side: 'client', ...r })),
  ];
  if (rows.length) {
    out += indent(
      renderTable(rows, [
        { header: 'Side', value: (r) => r.side },
        { header: 'Reason', value: (r) => r.name },
        { header: 'Count', value: (r) => String(r.count), align: 'right' },
        { header: 'Why', value: (r) => r.description + (r.fix ? `; fix: ${r.fix}` : '') },
      ]),
    );
  }
  return out + wrapNote('server', server, delta) + wrapNote('client', client, delta);
}

export interface SinceInfo {
  savedAt: string;
  seconds: number;
}

export function renderSystemStats(s: SmcSystemStats, since?: SinceInfo): string {
  const head = since
    ? `Changes since ${since.savedAt} (${since.seconds} s ago)\n`
    : 'SMC counters of this network namespace since it was created (the kernel has no reset: use --save / --since for deltas)\n';
  return [
    head,
    techView('SMC-D', s.smcd, !!since),
    techView('SMC-R', s.smcr, !!since),
    `Handshake errors: client ${s.handshakeErrors.client}, server ${s.handshakeErrors.server}\n`,
    fallbackView(s, !!since),
  ].join('');
}

const yesNo = (v: boolean | null): string => (v === null ? '-' : v ? 'yes' : 'no');
const dash = (v: string | number | null | undefined): string => (v === null || v === undefined || v === '' ? '-' : String(v));

export function renderDevices(d: SmcDevices): string {
  let out = 'SMC-D devices (ISM)\n';
  if (d.smcd.length) {
    out += indent(
      renderTable(d.smcd, [
        { header: 'PCI ID', value: (x) => dash(x.pciId) },
        { header: 'FID', value: (x) => dash(x.pciFid), align: 'right' },
        { header: 'CHID', value: (x) => (x.pciChid === null ? '-' : `0x${x.pciChid.toString(16)}`) },
        { header: 'PNET ID', value: (x) => dash(x.ports[0]?.pnetId) },
        { header: 'Link groups', value: (x) => dash(x.useCount), align: 'right' },
        { header: 'Critical', value: (x) => yesNo(x.critical) },
      ]),
    );
  } else {
    out += '  none listed (the kernel leaves loopback-ism out of this list)\n';
  }
  const dibsLo = d.dibs?.find((x) => x.loopback);
  const lo =
    d.dibs !== null
      ? dibsLo
        ? `present (the DIBS loopback device ${dibsLo.name}, ${DIBS_CLASS}/${dibsLo.name})`
        : `absent (no DIBS loopback device in ${DIBS_CLASS}; it needs CONFIG_DIBS_LO)`
      : d.loopbackIsm === true
        ? 'present (system info: an ISMv2 device exists and none is listed, which is loopback-ism)'
        : d.loopbackIsm === false
          ? `absent (system info: no ISMv2 device; loopback-ism needs ${LOOPBACK_CONFIG})`
          : 'cannot tell (system info: an ISMv2 device exists, ISM devices are listed too)';
  out += `  loopback-ism: ${lo}\n`;
  if (d.dibs !== null) {
    out += 'DIBS devices (6.18+: every SMC-D device, loopback included)\n';
    out += d.dibs.length
      ? indent(
          renderTable(d.dibs, [
            { header: 'Name', value: (x) => x.name },
            { header: 'Kind', value: (x) => (x.loopback ? 'loopback (loopback-ism)' : 'ISM') },
            { header: 'GID', value: (x) => dash(x.gid) },
            { header: 'Fabric', value: (x) => (x.fabricId === null ? '-' : `0x${x.fabricId.toString(16).padStart(4, '0')}`) },
          ]),
        )
      : '  none\n';
  }
  out += 'SMC-R devices (RDMA)\n';
  const ports = d.smcr.flatMap((dev): { dev: SmcDevice; p: SmcDevicePort | undefined }[] =>
    dev.ports.length ? dev.ports.map((p) => ({ dev, p })) : [{ dev, p: undefined }]);
  if (ports.length) {
    out += indent(
      renderTable(ports, [
        { header: 'Device', value: (x) => dash(x.dev.name) },
        { header: 'Port', value: (x) => dash(x.p?.port) },
        { header: 'State', value: (x) => dash(x.p?.state) },
        { header: 'Usable', value: (x) => yesNo(x.p?.valid ?? null) },
        { header: 'Ifindex', value: (x) => dash(x.p?.netdevIndex), align: 'right' },
        { header: 'PNET ID', value: (x) => dash(x.p?.pnetId) },
        { header: 'Links', value: (x) => dash(x.p?.links), align: 'right' },
        { header: 'Critical', value: (x) => yesNo(x.dev.critical) },
        { header: 'PCI ID', value: (x) => dash(x.dev.pciId) },
      ]),
    );
  } else {
    out += '  none (SMC-R needs an RDMA device: a RoCE NIC, or SoftRoCE: rdma link add rxe0 type rxe netdev eth0)\n';
  }
  return out;
}

const v2Text = (v: { version: number | null; release: number | null } | null): string =>
  v ? `v${dash(v.version)}.${dash(v.release)}` : 'v1';

export function renderLinkGroups(l: SmcLinkGroups, namespaceGiven: boolean): string {
  let out = 'SMC-D link groups\n';
  out += l.smcd.length
    ? indent(
        renderTable(l.smcd, [
          { header: 'ID', value: (g) => `0x${g.id.toString(16)}` },
          { header: 'GID', value: (g) => dash(g.gid) },
          { header: 'Peer GID', value: (g) => dash(g.peerGid) },
          { header: 'VLAN', value: (g) => dash(g.vlanId), align: 'right' },
          { header: 'Conns', value: (g) => dash(g.connections), align: 'right' },
          { header: 'DMBs', value: (g) => (g.dmbBytes === null ? '-' : formatSize(g.dmbBytes)), align: 'right' },
          { header: 'SMC', value: (g) => v2Text(g.v2) },
          { header: 'EID', value: (g) => dash(g.v2?.negotiatedEid) },
          { header: 'Peer host', value: (g) => dash(g.v2?.peerHost) },
        ]),
      )
    : '  none\n';
  out += 'SMC-R link groups\n';
  out += l.smcr.length
    ? indent(
        renderTable(l.smcr, [
          { header: 'ID', value: (g) => `0x${g.id.toString(16)}` },
          { header: 'Role', value: (g) => dash(g.role) },
          { header: 'Type', value: (g) => dash(g.type) },
          { header: 'VLAN', value: (g) => dash(g.vlanId), align: 'right' },
          { header: 'Conns', value: (g) => dash(g.connections), align: 'right' },
          { header: 'PNET ID', value: (g) => dash(g.pnetId) },
          { header: 'SMC', value: (g) => v2Text(g.v2) },
          { header: 'EID', value: (g) => dash(g.v2?.negotiatedEid) },
          { header: 'Peer host', value: (g) => dash(g.v2?.peerHost) },
        ]),
      )
    : '  none\n';
  const links = l.smcr.flatMap((g) => g.links.map((k) => ({ g, k })));
  if (links.length) {
    out += 'SMC-R links\n';
    out += indent(
      renderTable(links, [
        { header: 'Link group', value: (x) => `0x${x.g.id.toString(16)}` },
        { header: 'Link', value: (x) => dash(x.k.id), align: 'right' },
        { header: 'Device', value: (x) => `${dash(x.k.ibDevice)}:${dash(x.k.ibPort)}` },
        { header: 'State', value: (x) => dash(x.k.state) },
        { header: 'Conns', value: (x) => dash(x.k.connections), align: 'right' },
        { header: 'GID', value: (x) => dash(x.k.gid) },
        { header: 'Peer GID', value: (x) => dash(x.k.peerGid) },
      ]),
    );
  }
  if (namespaceGiven) out += '(the kernel lists the link groups of the whole host, not only of this namespace)\n';
  return out;
}

const DIBS_CLASS = '/sys/class/dibs';
const LOOPBACK_CONFIG = 'CONFIG_SMC_LO on 6.10-6.17, CONFIG_DIBS_LO on 6.18+';

function smcdV2Text(i: SmcSystemInfo): string {
  const lo = i.dibs?.find((x: DibsDevice) => x.loopback);
  if (!i.ismV2) return `no (no ISMv2 device; loopback-ism needs ${LOOPBACK_CONFIG})`;
  if (lo) return `yes (the DIBS loopback device ${lo.name} is present: loopback-ism)`;
  if (i.dibs && i.dibs.length > 0) return `yes (DIBS devices: ${i.dibs.map((x) => x.name).join(', ')})`;
  return 'yes (an ISMv2 device is present: loopback-ism, or ISM on s390)';
}

export function renderInfo(i: SmcSystemInfo): string {
  const rows: [string, string][] = [
    ['SMC version', i.version === undefined ? '-' : `v${i.version}.${i.release ?? 0}`],
    ['SMC-Dv2 (ISMv2)', smcdV2Text(i)],
    ['SMC-Rv2', i.smcrV2 ? 'yes' : 'no'],
    ['Host name', dash(i.localHost)],
    ['System EID (SEID)', i.seid ? i.seid : 'none (a SEID exists on s390 only; elsewhere SMCv2 needs a UEID: smc-run ueid add ID)'],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n') + '\n';
}
