// The namespace-wide SMC readings, each written once: the generic netlink dumps it needs ({cmd, label})
// and the parser of their replies. runQuery runs one over the blocking transport (the sync API, the CLI),
// runQueryAsync over the thread-pool one (smc-run/promises, the exporter); neither knows a reading.
import { SMC_CMD, parseSysInfo, type SmcGenl, type SysInfo } from '../netlink/smc-genl';
import type { GenlMessage } from '../netlink/genl';
import { parseSystemStats, type SmcSystemStats } from '../stats/system';
import { parseDevices, type SmcDevice } from '../topology/devices';
import { parseSmcdLinkGroups, parseSmcrLinkGroups, type SmcdLinkGroup, type SmcrLinkGroup } from '../topology/link-groups';
import { readDibsDevices, type DibsDevice } from '../topology/dibs';

export interface SmcDevices {
  /** ISM devices; the kernel leaves loopback-ism out of this list */
  smcd: SmcDevice[];
  smcr: SmcDevice[];
  /**
   * loopback-ism. Kernels 6.18+ show it in sysfs as the DIBS device `lo` (see dibs): true/false from
   * there. Before (6.10-6.17, CONFIG_SMC_LO) it is seen through system info because the device list
   * omits it: true when an ISMv2 device exists and none is listed (loopback-ism is the one the list
   * leaves out), false when no ISMv2 device exists, null when listed ISM devices make it impossible to tell.
   */
  loopbackIsm: boolean | null;
  /** system info: an ISMv2 device (loopback-ism or s390 ISMv2) is present */
  ismV2: boolean;
  /** the DIBS devices (6.18+: /sys/class/dibs); null when the kernel has no DIBS class */
  dibs: DibsDevice[] | null;
}

export interface SmcLinkGroups {
  smcd: SmcdLinkGroup[];
  /** SMC-R link groups with their links */
  smcr: SmcrLinkGroup[];
}

/** System info plus the DIBS devices (6.18+; null before: no /sys/class/dibs). */
export interface SmcSystemInfo extends SysInfo {
  dibs: DibsDevice[] | null;
}

/** loopback-ism from the DIBS class when there is one, else inferred from system info and the device list. */
export function loopbackIsmPresent(ismV2: boolean, listedSmcd: number, dibs: readonly DibsDevice[] | null): boolean | null {
  if (dibs !== null) return dibs.some((d) => d.loopback);
  return !ismV2 ? false : listedSmcd === 0 ? true : null;
}

/** One generic netlink dump of the SMC family; label names it in errors. */
export interface Dump {
  cmd: number;
  label: string;
}

/** A reading: its dumps, made in this order, and the parser of their replies (in the same order). */
export interface Query<T> {
  dumps: readonly Dump[];
  parse(replies: readonly GenlMessage[][]): T;
}

/** one message: per-namespace counters of SMC-D and SMC-R (since the namespace was created) */
const STATS: Dump = { cmd: SMC_CMD.GET_STATS, label: 'SMC statistics' };
/** one message per (side, fallback reason) of this namespace */
const FALLBACK_STATS: Dump = { cmd: SMC_CMD.GET_FBACK_STATS, label: 'SMC fallback statistics' };
/** ISM devices (the kernel leaves loopback-ism out of this list) */
const SMCD_DEVICES: Dump = { cmd: SMC_CMD.GET_DEV_SMCD, label: 'SMC-D devices' };
const SMCR_DEVICES: Dump = { cmd: SMC_CMD.GET_DEV_SMCR, label: 'SMC-R devices' };
const SYS_INFO: Dump = { cmd: SMC_CMD.GET_SYS_INFO, label: 'SMC system info' };
const SMCD_LINK_GROUPS: Dump = { cmd: SMC_CMD.GET_LGR_SMCD, label: 'SMC-D link groups' };
/** each link group's message is followed by one per link (links carry no link group id: order is the tie) */
const SMCR_LINKS: Dump = { cmd: SMC_CMD.GET_LINK_SMCR, label: 'SMC-R link groups and links' };

const reply = (replies: readonly GenlMessage[][], i: number): GenlMessage[] => replies[i] ?? [];

/** The table: every namespace-wide reading of the public API, the CLI and the exporter. */
export const QUERIES = {
  /** the SMC counters of the namespace since it was created (the kernel has no reset) */
  systemStats: {
    dumps: [STATS, FALLBACK_STATS],
    parse: (r): SmcSystemStats => parseSystemStats(reply(r, 0), reply(r, 1)),
  } satisfies Query<SmcSystemStats>,
  devices: {
    dumps: [SMCD_DEVICES, SMCR_DEVICES, SYS_INFO],
    parse: (r): SmcDevices => {
      const smcd = parseDevices(reply(r, 0), 'smcd');
      const smcr = parseDevices(reply(r, 1), 'smcr');
      const { ismV2 } = parseSysInfo(reply(r, 2)[0]);
      const dibs = readDibsDevices();
      return { smcd, smcr, ismV2, loopbackIsm: loopbackIsmPresent(ismV2, smcd.length, dibs), dibs };
    },
  } satisfies Query<SmcDevices>,
  /** the kernel lists every link group of the host, whatever the namespace */
  linkGroups: {
    dumps: [SMCD_LINK_GROUPS, SMCR_LINKS],
    parse: (r): SmcLinkGroups => ({ smcd: parseSmcdLinkGroups(reply(r, 0)), smcr: parseSmcrLinkGroups(reply(r, 1)) }),
  } satisfies Query<SmcLinkGroups>,
  systemInfo: {
    dumps: [SYS_INFO],
    parse: (r): SmcSystemInfo => ({ ...parseSysInfo(reply(r, 0)[0]), dibs: readDibsDevices() }),
  } satisfies Query<SmcSystemInfo>,
};

/** Runs a reading on the calling thread (each dump blocks it while the kernel answers). */
export function runQuery<T>(g: SmcGenl, q: Query<T>): T {
  return q.parse(q.dumps.map((d) => g.family.dump(d.cmd, d.label)));
}

/** Runs a reading with every dump received off the main thread, one after the other on g's socket. */
export async function runQueryAsync<T>(g: SmcGenl, q: Query<T>): Promise<T> {
  const replies: GenlMessage[][] = [];
  for (const d of q.dumps) replies.push(await g.family.dumpAsync(d.cmd, d.label));
  return q.parse(replies);
}
