// The namespace-wide readings of the promise API, on sockets the caller already holds: the SMC generic
// netlink family (stats, devices, link groups) and a sock_diag socket (the SMC sockets). smc-run/promises
// opens both per call; the exporter (src/metrics/namespace-reader.ts) keeps them open between scrapes.
import { loopbackIsmPresent, type SmcDevices, type SmcLinkGroups } from '../api/system';
import { dumpTcpSocketsAsync } from '../netlink/inet-diag';
import { SMC_CMD, parseSysInfo, type SmcGenl } from '../netlink/smc-genl';
import { dumpSmcMessagesAsync, parseSmcDiagMessage } from '../netlink/sockdiag';
import type { NetlinkSocket } from '../netlink/socket';
import { toSocketInfo, type SmcSocketInfo } from './sockets';
import {
  parseDevices, parseSmcdLinkGroups, parseSmcrLinkGroups, parseSystemStats, readDibsDevices, type SmcSystemStats,
} from './system';
import { lacksAddresses, withTcpAddresses } from './tcp-addresses';

export async function readSystemStats(g: SmcGenl): Promise<SmcSystemStats> {
  return parseSystemStats(await g.dumpAsync(SMC_CMD.GET_STATS, 'SMC statistics'), await g.dumpAsync(SMC_CMD.GET_FBACK_STATS, 'SMC fallback statistics'));
}

export async function readDevices(g: SmcGenl): Promise<SmcDevices> {
  const smcd = parseDevices(await g.dumpAsync(SMC_CMD.GET_DEV_SMCD, 'SMC-D devices'), 'smcd');
  const smcr = parseDevices(await g.dumpAsync(SMC_CMD.GET_DEV_SMCR, 'SMC-R devices'), 'smcr');
  const { ismV2 } = parseSysInfo((await g.dumpAsync(SMC_CMD.GET_SYS_INFO, 'SMC system info'))[0]);
  const dibs = readDibsDevices();
  return { smcd, smcr, ismV2, loopbackIsm: loopbackIsmPresent(ismV2, smcd.length, dibs), dibs };
}

export async function readLinkGroups(g: SmcGenl): Promise<SmcLinkGroups> {
  return {
    smcd: parseSmcdLinkGroups(await g.dumpAsync(SMC_CMD.GET_LGR_SMCD, 'SMC-D link groups')),
    smcr: parseSmcrLinkGroups(await g.dumpAsync(SMC_CMD.GET_LINK_SMCR, 'SMC-R link groups and links')),
  };
}

export async function readSmcSockets(nl: NetlinkSocket): Promise<SmcSocketInfo[]> {
  const rows = (await dumpSmcMessagesAsync(nl)).map(parseSmcDiagMessage);
  const tcp = rows.some(lacksAddresses) ? await dumpTcpSocketsAsync(nl) : [];
  return withTcpAddresses(rows, tcp).map(({ row, family }) => toSocketInfo(row, family));
}
