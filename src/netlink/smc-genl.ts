// The SMC generic netlink family (what smc-tools' smcr/smcd/smc_ueid use): system info, UEIDs,
// SEID, handshake limitation, and the attribute numbers of its dumps (parsed in stats/system.ts,
// topology/devices.ts and topology/link-groups.ts). One socket per SmcGenl; callers close it.
import { NETLINK_GENERIC } from '../constants';
import { buildStringAttr, readString } from './message';
import { GenlFamily, type GenlMessage } from './genl';
import { NetlinkSocket } from './socket';

export const SMC_GENL_FAMILY_NAME = 'SMC_GEN_NETLINK';
export const SMC_GENL_FAMILY_VERSION = 1;

export const SMC_CMD = {
  GET_SYS_INFO: 1,
  GET_LGR_SMCR: 2,
  GET_LINK_SMCR: 3,
  GET_LGR_SMCD: 4,
  GET_DEV_SMCD: 5,
  GET_DEV_SMCR: 6,
  GET_STATS: 7,
  GET_FBACK_STATS: 8,
  DUMP_UEID: 9,
  ADD_UEID: 10,
  REMOVE_UEID: 11,
  FLUSH_UEID: 12,
  DUMP_SEID: 13,
  ENABLE_SEID: 14,
  DISABLE_SEID: 15,
  DUMP_HS_LIMITATION: 16,
  ENABLE_HS_LIMITATION: 17,
  DISABLE_HS_LIMITATION: 18,
} as const;

/** The top-level attribute of each reply (SMC_GEN_*). */
export const SMC_GEN = { SYS_INFO: 1, LGR_SMCR: 2, LINK_SMCR: 3, LGR_SMCD: 4, DEV_SMCD: 5, DEV_SMCR: 6, STATS: 7, FBACK_STATS: 8 } as const;
const SYS = { VER: 1, REL: 2, IS_ISM_V2: 3, LOCAL_HOST: 4, SEID: 5, IS_SMCR_V2: 6 } as const;
const SMC_NLA_EID_TABLE_ENTRY = 1;
const SEID = { ENTRY: 1, ENABLED: 2 } as const;
const SMC_NLA_HS_LIMITATION_ENABLED = 1;
export const SMC_MAX_EID_LEN = 32;

export interface SysInfo {
  version: number | undefined;
  release: number | undefined;
  /** an ISMv2 device (or loopback-ism) is registered: SMC-Dv2 possible */
  ismV2: boolean;
  smcrV2: boolean;
  localHost: string | undefined;
  /** the system EID ("" off s390) */
  seid: string | undefined;
}

/** GET_SYS_INFO's reply as SysInfo (a pure function: tested on recorded replies). */
export function parseSysInfo(msg: GenlMessage | undefined): SysInfo {
  const a = msg?.attrs.nested(SMC_GEN.SYS_INFO);
  return {
    version: a?.u8(SYS.VER),
    release: a?.u8(SYS.REL),
    ismV2: a?.u8(SYS.IS_ISM_V2) === 1,
    smcrV2: a?.u8(SYS.IS_SMCR_V2) === 1,
    localHost: a?.str(SYS.LOCAL_HOST)?.trim(),
    seid: a?.str(SYS.SEID)?.trim(),
  };
}

export class SmcGenl {
  private constructor(readonly family: GenlFamily) {}

  static open(netnsPath?: string): SmcGenl {
    return new SmcGenl(GenlFamily.open(SMC_GENL_FAMILY_NAME, SMC_GENL_FAMILY_VERSION, netnsPath));
  }

  /** open() with the family resolved off the main thread (opening the socket itself is one syscall). */
  static async openAsync(netnsPath?: string): Promise<SmcGenl> {
    const socket = await NetlinkSocket.openAsync(NETLINK_GENERIC, netnsPath);
    try {
      return await SmcGenl.resolveAsync(socket);
    } catch (e) {
      socket.close();
      throw e;
    }
  }

  /** The family on a generic netlink socket the caller keeps (and closes), resolved off the main thread. */
  static async resolveAsync(socket: NetlinkSocket): Promise<SmcGenl> {
    return new SmcGenl(await GenlFamily.resolveAsync(socket, SMC_GENL_FAMILY_NAME, SMC_GENL_FAMILY_VERSION));
  }

  close(): void {
    this.family.close();
  }

  static with<T>(netnsPath: string | undefined, fn: (g: SmcGenl) => T): T {
    const g = SmcGenl.open(netnsPath);
    try {
      return fn(g);
    } finally {
      g.close();
    }
  }

  sysInfo(): SysInfo {
    return parseSysInfo(this.family.dump(SMC_CMD.GET_SYS_INFO, 'SMC system info')[0]);
  }

  ueids(): string[] {
    const out: string[] = [];
    for (const m of this.family.dump(SMC_CMD.DUMP_UEID, 'list UEIDs')) {
      for (const [type, data] of m.attrs.map) if (type === SMC_NLA_EID_TABLE_ENTRY) out.push(readString(data).trim());
    }
    return out;
  }

  /** id must already be in kernel form (see ueid.ts normalizeUeid). */
  addUeid(id: string): void {
    this.family.doAck(SMC_CMD.ADD_UEID, `add UEID ${id.trim()}`, buildStringAttr(SMC_NLA_EID_TABLE_ENTRY, id));
  }

  removeUeid(id: string): void {
    this.family.doAck(SMC_CMD.REMOVE_UEID, `remove UEID ${id.trim()}`, buildStringAttr(SMC_NLA_EID_TABLE_ENTRY, id));
  }

  flushUeids(): void {
    this.family.doAck(SMC_CMD.FLUSH_UEID, 'flush UEIDs');
  }

  seid(): { seid: string; enabled: boolean } {
    const m = this.family.dump(SMC_CMD.DUMP_SEID, 'show SEID')[0];
    return { seid: m?.attrs.str(SEID.ENTRY)?.trim() ?? '', enabled: m?.attrs.u8(SEID.ENABLED) === 1 };
  }

  setSeid(enabled: boolean): void {
    this.family.doAck(enabled ? SMC_CMD.ENABLE_SEID : SMC_CMD.DISABLE_SEID, `${enabled ? 'enable' : 'disable'} SEID`);
  }

  hsLimitation(): boolean {
    const m = this.family.dump(SMC_CMD.DUMP_HS_LIMITATION, 'show handshake limitation')[0];
    return m?.attrs.u8(SMC_NLA_HS_LIMITATION_ENABLED) === 1;
  }

  setHsLimitation(enabled: boolean): void {
    this.family.doAck(enabled ? SMC_CMD.ENABLE_HS_LIMITATION : SMC_CMD.DISABLE_HS_LIMITATION, `${enabled ? 'enable' : 'disable'} handshake limitation`);
  }
}

