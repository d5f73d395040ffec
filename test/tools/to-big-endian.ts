// Re-encodes netlink payloads recorded on a little-endian host as a big-endian host (s390x) would have
// received them, field by field: every host-order integer (netlink and attribute headers, struct fields,
// u16/u32/u64 and NLA_UINT attributes) is decoded little-endian and written back big-endian; ports,
// addresses, strings, GIDs of RoCE links and u8 fields are copied as they are. The layouts are written
// down here from the kernel's uapi headers (smc_diag.h, inet_diag.h, smc.h), independently of the parsers
// under test, so a parser that reads a field in the wrong order (or as the wrong type) fails on the
// converted fixtures. An attribute this tool has no layout for is an error, never copied blindly.
//
// Used by the parser tests (test/unit/*.test.ts, through test/helpers/byte-orders.ts) to run every
// recorded fixture in both byte orders.

/** A field's type; a nested attribute set is given by its own schema. */
type AttrType = 'u8' | 'u16' | 'u32' | 'u64' | 'uint' | 'str' | 'pad' | 'flag' | AttrSchema;
interface AttrSchema {
  [type: number]: AttrType;
}

function swapInt(src: Buffer, dst: Buffer, off: number, size: 2 | 4 | 8): void {
  if (off + size > src.length) throw new Error(`field at ${off} (${size} bytes) beyond ${src.length} bytes`);
  if (size === 2) dst.writeUInt16BE(src.readUInt16LE(off), off);
  else if (size === 4) dst.writeUInt32BE(src.readUInt32LE(off), off);
  else dst.writeBigUInt64BE(src.readBigUInt64LE(off), off);
}

const NLA_TYPE_MASK = 0x3fff;

/** Converts a run of attributes (headers and payloads, per schema) from little- to big-endian. */
export function attrsToBigEndian(src: Buffer, schema: AttrSchema, where = 'attrs'): Buffer {
  const dst = Buffer.from(src);
  let off = 0;
  while (off + 4 <= src.length) {
    const len = src.readUInt16LE(off);
    const type = src.readUInt16LE(off + 2) & NLA_TYPE_MASK;
    if (len < 4 || off + len > src.length) throw new Error(`${where}: bad attribute length ${len} at ${off}`);
    swapInt(src, dst, off, 2);
    swapInt(src, dst, off + 2, 2);
    const field = schema[type];
    if (field === undefined) throw new Error(`${where}: no layout for attribute ${type}`);
    const data = src.subarray(off + 4, off + len);
    const at = off + 4;
    if (typeof field === 'object') {
      attrsToBigEndian(data, field, `${where}.${type}`).copy(dst, at);
    } else if (field === 'u16' || field === 'u32' || field === 'u64') {
      const size = { u16: 2, u32: 4, u64: 8 }[field] as 2 | 4 | 8;
      if (data.length !== size) throw new Error(`${where}.${type}: ${field} of ${data.length} bytes`);
      swapInt(src, dst, at, size);
    } else if (field === 'uint') {
      if (data.length !== 4 && data.length !== 8) throw new Error(`${where}.${type}: uint of ${data.length} bytes`);
      swapInt(src, dst, at, data.length);
    }
    // u8, str, pad, flag: bytes, no order
    off += (len + 3) & ~3;
  }
  return dst;
}

// ---- SMC generic netlink (include/uapi/linux/smc.h, 6.12, plus the attributes 6.8-6.10 added) ----
const V2_COMMON: AttrSchema = { 0: 'u8', 1: 'u8', 2: 'u8', 3: 'str', 4: 'str' };
const LGR_R: AttrSchema = {
  1: 'u32', 2: 'u8', 3: 'u8', 4: 'str', 5: 'u8', 6: 'u32', 7: V2_COMMON, 8: { 1: 'u8' }, 9: 'u64', 10: 'pad', 11: 'u8',
  12: 'uint', 13: 'uint',
};
const LINK: AttrSchema = { 1: 'u8', 2: 'str', 3: 'u8', 4: 'str', 5: 'str', 6: 'u32', 7: 'u32', 8: 'u32', 9: 'u32', 10: 'u32' };
// CHID (7): the uapi comment says u16, but smc_nl_fill_smcd_lgr puts a u32 (seen in the 6.12 replies)
const LGR_D: AttrSchema = {
  1: 'u32', 2: 'u64', 3: 'u64', 4: 'u8', 5: 'u32', 6: 'str', 7: 'u32', 8: 'pad', 9: V2_COMMON, 10: 'u64', 11: 'u64',
  12: 'uint', 13: 'uint',
};
const PORT: AttrSchema = { 1: 'u8', 2: 'str', 3: 'u32', 4: 'u8', 5: 'u8', 6: 'u32' };
const DEV: AttrSchema = { 1: 'u32', 2: 'u8', 3: 'u32', 4: 'u16', 5: 'u16', 6: 'u16', 7: 'str', 8: PORT, 9: PORT, 10: 'str' };
const u64s = (from: number, to: number): AttrSchema => {
  const s: AttrSchema = { 0: 'pad' };
  for (let t = from; t <= to; t++) s[t] = 'u64';
  return s;
};
const SIZES = u64s(1, 9);
const RMB = u64s(1, 7);
const TECH: AttrSchema = { ...u64s(7, 19), 1: SIZES, 2: SIZES, 3: SIZES, 4: SIZES, 5: RMB, 6: RMB, 20: 'uint', 21: 'uint' };
const STATS: AttrSchema = { 0: 'pad', 1: TECH, 2: TECH, 3: 'u64', 4: 'u64' };
const FBACK: AttrSchema = { 0: 'pad', 1: 'u8', 2: 'u64', 3: 'u64', 4: 'u32', 5: 'u16' };

/** The top-level attributes of each SMC_GEN_NETLINK command's reply. */
export const SMC_GENL_REPLIES: Record<number, AttrSchema> = {
  1: { 1: { 1: 'u8', 2: 'u8', 3: 'u8', 4: 'str', 5: 'str', 6: 'u8' } }, // GET_SYS_INFO
  2: { 2: LGR_R }, // GET_LGR_SMCR
  3: { 2: LGR_R, 3: LINK }, // GET_LINK_SMCR: link group messages, each followed by its links
  4: { 4: LGR_D }, // GET_LGR_SMCD
  5: { 5: DEV }, // GET_DEV_SMCD
  6: { 6: DEV }, // GET_DEV_SMCR
  7: { 7: STATS }, // GET_STATS
  8: { 8: FBACK }, // GET_FBACK_STATS
  9: { 1: 'str' }, // DUMP_UEID
  13: { 1: 'str', 2: 'u8' }, // DUMP_SEID
  16: { 1: 'u8' }, // DUMP_HS_LIMITATION
};

/** One genl payload (4-byte genl header + attributes) of the reply to SMC command cmd. */
export function genlToBigEndian(payload: Buffer, cmd: number): Buffer {
  const schema = SMC_GENL_REPLIES[cmd];
  if (!schema) throw new Error(`no layout for SMC genl command ${cmd}`);
  if (payload.length < 4) throw new Error(`genl payload of ${payload.length} bytes`);
  const out = Buffer.from(payload);
  swapInt(payload, out, 2, 2); // genlmsghdr.reserved
  attrsToBigEndian(payload.subarray(4), schema, `genl cmd ${cmd}`).copy(out, 4);
  return out;
}

// ---- SMC sock_diag (include/uapi/linux/smc_diag.h, inet_diag.h) ----
const SMC_DIAG_MSG_LEN = 64;
/** struct smc_diag_conninfo: four u32, then cursors {u16 reserved, u16 wrap, u32 count}, u8 flags. */
function conninfoToBigEndian(src: Buffer): Buffer {
  const dst = Buffer.from(src);
  for (const off of [0, 4, 8, 12]) swapInt(src, dst, off, 4);
  for (const off of [16, 24, 32, 40, 52, 60, 68]) {
    swapInt(src, dst, off, 2);
    swapInt(src, dst, off + 2, 2);
    swapInt(src, dst, off + 4, 4);
  }
  return dst;
}
/** struct smcd_diag_dmbinfo: u32 linkid, 4 bytes of padding, then u64 GIDs and tokens (40 or 56 bytes). */
function dmbinfoToBigEndian(src: Buffer): Buffer {
  const dst = Buffer.from(src);
  swapInt(src, dst, 0, 4);
  for (let off = 8; off + 8 <= src.length; off += 8) swapInt(src, dst, off, 8);
  return dst;
}

/** One sock_diag reply payload: struct smc_diag_msg followed by SMC_DIAG_* attributes. */
export function sockDiagToBigEndian(payload: Buffer): Buffer {
  if (payload.length < SMC_DIAG_MSG_LEN) throw new Error(`smc_diag_msg of ${payload.length} bytes`);
  const out = Buffer.from(payload);
  // u8 family/state/mode/shutdown; sockid: be16 ports and be32 addresses stay, idiag_if and the two
  // cookie halves are host order; then uid (u32) and inode (u64)
  swapInt(payload, out, 4 + 36, 4);
  swapInt(payload, out, 4 + 40, 4);
  swapInt(payload, out, 4 + 44, 4);
  swapInt(payload, out, 52, 4);
  swapInt(payload, out, 56, 8);
  let off = SMC_DIAG_MSG_LEN;
  while (off + 4 <= payload.length) {
    const len = payload.readUInt16LE(off);
    const type = payload.readUInt16LE(off + 2);
    if (len < 4 || off + len > payload.length) throw new Error(`smc_diag attribute length ${len} at ${off}`);
    swapInt(payload, out, off, 2);
    swapInt(payload, out, off + 2, 2);
    const data = payload.subarray(off + 4, off + len);
    if (type === 1) conninfoToBigEndian(data).copy(out, off + 4);
    else if (type === 4) dmbinfoToBigEndian(data).copy(out, off + 4);
    else if (type === 5) {
      swapInt(payload, out, off + 4, 4);
      swapInt(payload, out, off + 8, 4);
    } else if (type !== 2 && type !== 3) throw new Error(`no layout for SMC_DIAG attribute ${type}`);
    // 2 LGRINFO: u8 fields, a name and raw GIDs; 3 SHUTDOWN: u8
    off += (len + 3) & ~3;
  }
  return out;
}


// ---- inet_diag (include/uapi/linux/inet_diag.h): TCP rows, for the addresses of IPPROTO_SMC sockets ----
const INET_DIAG_MSG_LEN = 72;
// the attributes a TCP dump carries: SHUTDOWN (u8), SKV6ONLY (u8), MARK (u32, CAP_NET_ADMIN),
// CGROUP_ID (u64), SOCKOPT (struct inet_diag_sockopt: two bytes of bit-fields, unread; copied as bytes)
const INET_DIAG_ATTRS: AttrSchema = { 8: 'u8', 11: 'u8', 15: 'u32', 21: 'u64', 22: 'pad' };

/** One inet_diag reply payload: struct inet_diag_msg followed by INET_DIAG_* attributes. */
export function inetDiagToBigEndian(payload: Buffer): Buffer {
  if (payload.length < INET_DIAG_MSG_LEN) throw new Error(`inet_diag_msg of ${payload.length} bytes`);
  const out = Buffer.from(payload);
  // u8 family/state/timer/retrans; sockid as in smc_diag (idiag_if and the cookie halves host order);
  // then expires, rqueue, wqueue, uid, inode: u32 each
  for (const off of [4 + 36, 4 + 40, 4 + 44, 52, 56, 60, 64, 68]) swapInt(payload, out, off, 4);
  attrsToBigEndian(payload.subarray(INET_DIAG_MSG_LEN), INET_DIAG_ATTRS, 'inet_diag').copy(out, INET_DIAG_MSG_LEN);
  return out;
}
