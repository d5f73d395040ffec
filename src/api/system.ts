// System-wide SMC state of a network namespace (the caller's, or --target / --netns): counters,
// devices, link groups and system info, read over the SMC generic netlink family.
import type { NamespaceTarget } from '../netns';
import type { SmcSystemStats } from '../stats/system';
import { withSmcGenl } from './genl';
import { QUERIES, runQuery, type SmcDevices, type SmcLinkGroups, type SmcSystemInfo } from './queries';

export { loopbackIsmPresent, type SmcDevices, type SmcLinkGroups, type SmcSystemInfo } from './queries';

/** The SMC counters of the namespace since it was created (the kernel has no reset). */
export function getSmcSystemStats(target: NamespaceTarget = {}): SmcSystemStats {
  return withSmcGenl(target, (g) => runQuery(g, QUERIES.systemStats));
}

export function getSmcDevices(target: NamespaceTarget = {}): SmcDevices {
  return withSmcGenl(target, (g) => runQuery(g, QUERIES.devices));
}

/** SMC-D and SMC-R link groups; the kernel lists every link group of the host, whatever the namespace. */
export function getSmcLinkGroups(target: NamespaceTarget = {}): SmcLinkGroups {
  return withSmcGenl(target, (g) => runQuery(g, QUERIES.linkGroups));
}

/** SMC version, SMC-Dv2 (ISMv2) and SMC-Rv2 capability, host name, system EID and DIBS devices. */
export function getSmcSystemInfo(target: NamespaceTarget = {}): SmcSystemInfo {
  return withSmcGenl(target, (g) => runQuery(g, QUERIES.systemInfo));
}
