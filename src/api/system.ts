// System-wide SMC state of a network namespace (the caller's, or --target / --netns): counters,
// devices, link groups and system info, read over the SMC generic netlink family.
import * as fs from 'node:fs';
import { withNetns, type NamespaceTarget } from '../netns';
import type { SysInfo } from '../netlink/smc-genl';
import {
  parseDevices, parseSmcdLinkGroups, parseSmcrLinkGroups, parseSystemStats, readDibsDevices,
  type DibsDevice, type SmcDevice, type SmcSystemStats, type SmcdLinkGroup, type SmcrLinkGroup,
} from '../stats/system';
import type { CounterScope } from '../stats/snapshot';
import { withSmcGenl } from './genl';

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

/** loopback-ism from the DIBS class when there is one, else inferred from system info and the device list. */
export function loopbackIsmPresent(ismV2: boolean, listedSmcd: number, dibs: readonly DibsDevice[] | null): boolean | null {
  if (dibs !== null) return dibs.some((d) => d.loopback);
  return !ismV2 ? false : listedSmcd === 0 ? true : null;
}

export interface SmcLinkGroups {
  smcd: SmcdLinkGroup[];
  /** SMC-R link groups with their links */
  smcr: SmcrLinkGroup[];
}


/** The SMC counters of the namespace since it was created (the kernel has no reset). */
export function getSmcSystemStats(target: NamespaceTarget = {}): SmcSystemStats {
  return withSmcGenl(target, (g) => parseSystemStats(g.dumpStats(), g.dumpFallbackStats()));
}

export function getSmcDevices(target: NamespaceTarget = {}): SmcDevices {
  return withSmcGenl(target, (g) => {
    const smcd = parseDevices(g.dumpSmcdDevices(), 'smcd');
    const smcr = parseDevices(g.dumpSmcrDevices(), 'smcr');
    const { ismV2 } = g.sysInfo();
    const dibs = readDibsDevices();
    return { smcd, smcr, ismV2, loopbackIsm: loopbackIsmPresent(ismV2, smcd.length, dibs), dibs };
  });
}

/** SMC-D and SMC-R link groups; the kernel lists every link group of the host, whatever the namespace. */
export function getSmcLinkGroups(target: NamespaceTarget = {}): SmcLinkGroups {
  return withSmcGenl(target, (g) => ({
    smcd: parseSmcdLinkGroups(g.dumpSmcdLinkGroups()),
    smcr: parseSmcrLinkGroups(g.dumpSmcrLinkGroups(true)),
  }));
}

/** System info plus the DIBS devices (6.18+; null before: no /sys/class/dibs). */
export interface SmcSystemInfo extends SysInfo {
  dibs: DibsDevice[] | null;
}

/** SMC version, SMC-Dv2 (ISMv2) and SMC-Rv2 capability, host name, system EID and DIBS devices. */
export function getSmcSystemInfo(target: NamespaceTarget = {}): SmcSystemInfo {
  return withSmcGenl(target, (g) => ({ ...g.sysInfo(), dibs: readDibsDevices() }));
}

function readOrNull(read: () => string): string | null {
  try {
    return read();
  } catch {
    return null;
  }
}

/** The boot and namespace whose counters getSmcSystemStats(target) reads (for snapshots). */
export function counterScope(target: NamespaceTarget = {}): CounterScope {
  return {
    bootId: readOrNull(() => fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()),
    netns: readOrNull(() => `net:[${withNetns(target, (ns) => ns?.inode ?? fs.statSync('/proc/self/ns/net').ino)}]`),
  };
}
