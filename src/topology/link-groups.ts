// The SMC-D link groups and the SMC-R link groups with their links from the SMC generic netlink family
// (GET_LGR_SMCD, GET_LGR_SMCR, GET_LINK_SMCR), as typed objects: pure functions over the kernel's
// messages, tested on replies recorded in a real guest (test/fixtures/genl) and fuzzed.
import { Attrs, NetlinkParseError, flag, named, orNull, required, requiredNest } from '../netlink/message';
import type { GenlMessage } from '../netlink/genl';
import { SMC_GEN as GEN } from '../netlink/smc-genl';

const LGR_D = {
  ID: 1, GID: 2, PEER_GID: 3, VLAN_ID: 4, CONNS_NUM: 5, PNETID: 6, CHID: 7, V2_COMMON: 9, EXT_GID: 10, PEER_EXT_GID: 11,
  SNDBUF_ALLOC: 12, DMB_ALLOC: 13,
} as const;
const LGR_R = {
  ID: 1, ROLE: 2, TYPE: 3, PNETID: 4, VLAN_ID: 5, CONNS_NUM: 6, V2_COMMON: 7, V2: 8, NET_COOKIE: 9, BUF_TYPE: 11,
  SNDBUF_ALLOC: 12, RMB_ALLOC: 13,
} as const;
const LGR_R_V2_DIRECT = 1;
// SMC_NLA_LGR_V2_*: this enum starts at 0 (VER), unlike the others
const V2 = { VER: 0, REL: 1, OS: 2, NEG_EID: 3, PEER_HOST: 4 } as const;
const LINK = {
  ID: 1, IB_DEV: 2, IB_PORT: 3, GID: 4, PEER_GID: 5, CONN_CNT: 6, NET_DEV: 7, UID: 8, PEER_UID: 9, STATE: 10,
} as const;

const PEER_OS: Record<number, string> = { 1: 'z/OS', 2: 'Linux', 3: 'AIX' };
const LGR_TYPE: Record<number, string> = { 0: 'none', 1: 'single', 2: 'symmetric', 3: 'asymmetric-peer', 4: 'asymmetric-local' };
const BUF_TYPE: Record<number, string> = { 0: 'physical', 1: 'virtual', 2: 'mixed' };
const LINK_STATE: Record<number, string> = { 0: 'unused', 1: 'inactive', 2: 'activating', 3: 'active' };


/** What the peers agreed in an SMCv2 handshake (absent for SMCv1 link groups). */
export interface SmcV2Info {
  version: number | null;
  release: number | null;
  peerOs: string | null;
  peerHost: string | null;
  /** the EID both sides share (a UEID, or the SEID on s390) */
  negotiatedEid: string | null;
}

export interface SmcdLinkGroup {
  id: number;
  gid: string | null;
  /** the upper 64 bits of 128-bit (virtual ISM, loopback-ism) GIDs, 6.8+ */
  gidExt: string | null;
  peerGid: string | null;
  peerGidExt: string | null;
  vlanId: number | null;
  connections: number | null;
  pnetId: string | null;
  chid: number | null;
  /** bytes of send buffers / DMBs the link group holds (6.10+) */
  sndbufBytes: number | null;
  dmbBytes: number | null;
  v2: SmcV2Info | null;
}

export interface SmcrLink {
  id: number | null;
  ibDevice: string | null;
  ibPort: number | null;
  gid: string | null;
  peerGid: string | null;
  connections: number | null;
  netdevIndex: number | null;
  uid: string | null;
  peerUid: string | null;
  state: string | null;
}

export interface SmcrLinkGroup {
  id: number;
  role: 'client' | 'server' | null;
  /** link redundancy: single, symmetric, asymmetric-peer, asymmetric-local, none */
  type: string | null;
  pnetId: string | null;
  vlanId: number | null;
  connections: number | null;
  netCookie: number | null;
  bufferType: string | null;
  sndbufBytes: number | null;
  rmbBytes: number | null;
  /** SMC-Rv2: the peer is reachable without a router (null for v1) */
  direct: boolean | null;
  v2: SmcV2Info | null;
  links: SmcrLink[];
}

function v2Info(a: Attrs | undefined): SmcV2Info | null {
  if (!a) return null;
  return {
    version: orNull(a.u8(V2.VER)),
    release: orNull(a.u8(V2.REL)),
    peerOs: named(PEER_OS, a.u8(V2.OS)),
    peerHost: orNull(a.str(V2.PEER_HOST)?.trim()),
    negotiatedEid: orNull(a.str(V2.NEG_EID)?.trim()),
  };
}

function hex32(v: number | undefined): string | null {
  return v === undefined ? null : `0x${v.toString(16).padStart(8, '0')}`;
}

export function parseSmcdLinkGroups(msgs: readonly GenlMessage[]): SmcdLinkGroup[] {
  return msgs.map((m) => {
    const a = requiredNest(m.attrs, GEN.LGR_SMCD, 'SMC-D link group');
    return {
      id: required(a.u32(LGR_D.ID), 'SMC-D link group id'),
      gid: orNull(a.hex64(LGR_D.GID)),
      gidExt: orNull(a.hex64(LGR_D.EXT_GID)),
      peerGid: orNull(a.hex64(LGR_D.PEER_GID)),
      peerGidExt: orNull(a.hex64(LGR_D.PEER_EXT_GID)),
      vlanId: orNull(a.u8(LGR_D.VLAN_ID)),
      connections: orNull(a.u32(LGR_D.CONNS_NUM)),
      pnetId: orNull(a.str(LGR_D.PNETID)?.trim()),
      chid: orNull(a.unsigned(LGR_D.CHID)), // a u32 on the wire, though smc.h says u16
      sndbufBytes: orNull(a.uint(LGR_D.SNDBUF_ALLOC)),
      dmbBytes: orNull(a.uint(LGR_D.DMB_ALLOC)),
      v2: v2Info(a.nested(LGR_D.V2_COMMON)),
    };
  });
}

function parseSmcrLinkGroup(a: Attrs): SmcrLinkGroup {
  const role = a.u8(LGR_R.ROLE);
  const direct = a.nested(LGR_R.V2)?.u8(LGR_R_V2_DIRECT);
  return {
    id: required(a.u32(LGR_R.ID), 'SMC-R link group id'),
    role: role === undefined ? null : role === 1 ? 'server' : 'client',
    type: named(LGR_TYPE, a.u8(LGR_R.TYPE)),
    pnetId: orNull(a.str(LGR_R.PNETID)?.trim()),
    vlanId: orNull(a.u8(LGR_R.VLAN_ID)),
    connections: orNull(a.u32(LGR_R.CONNS_NUM)),
    netCookie: orNull(a.u64(LGR_R.NET_COOKIE)),
    bufferType: named(BUF_TYPE, a.u8(LGR_R.BUF_TYPE)),
    sndbufBytes: orNull(a.uint(LGR_R.SNDBUF_ALLOC)),
    rmbBytes: orNull(a.uint(LGR_R.RMB_ALLOC)),
    direct: flag(direct),
    v2: v2Info(a.nested(LGR_R.V2_COMMON)),
    links: [],
  };
}

function parseSmcrLink(a: Attrs): SmcrLink {
  return {
    id: orNull(a.u8(LINK.ID)),
    ibDevice: orNull(a.str(LINK.IB_DEV)),
    ibPort: orNull(a.u8(LINK.IB_PORT)),
    gid: orNull(a.str(LINK.GID)),
    peerGid: orNull(a.str(LINK.PEER_GID)),
    connections: orNull(a.u32(LINK.CONN_CNT)),
    netdevIndex: orNull(a.u32(LINK.NET_DEV)),
    uid: hex32(a.u32(LINK.UID)),
    peerUid: hex32(a.u32(LINK.PEER_UID)),
    state: named(LINK_STATE, a.u32(LINK.STATE)),
  };
}

/** GET_LGR_SMCR or GET_LINK_SMCR: link group messages, each followed by its links' messages. */
export function parseSmcrLinkGroups(msgs: readonly GenlMessage[]): SmcrLinkGroup[] {
  const out: SmcrLinkGroup[] = [];
  for (const m of msgs) {
    const lgr = m.attrs.nested(GEN.LGR_SMCR);
    if (lgr) {
      out.push(parseSmcrLinkGroup(lgr));
      continue;
    }
    const link = m.attrs.nested(GEN.LINK_SMCR);
    if (!link) throw new NetlinkParseError('SMC-R link groups: a message is neither a link group nor a link');
    const owner = out[out.length - 1];
    if (!owner) throw new NetlinkParseError('SMC-R link groups: a link before any link group');
    owner.links.push(parseSmcrLink(link));
  }
  return out;
}
