// The SMC-D and SMC-R devices from the SMC generic netlink family (GET_DEV_SMCD, GET_DEV_SMCR), as typed
// objects: pure functions over the kernel's messages, tested on replies recorded in a real guest
// (test/fixtures/genl) and fuzzed. Attribute numbers are those of include/uapi/linux/smc.h (6.12).
import { Attrs, flag, orNull, required, requiredNest } from '../netlink/message';
import type { GenlMessage } from '../netlink/genl';
import { SMC_GEN as GEN } from '../netlink/smc-genl';

const DEV = {
  USE_CNT: 1, IS_CRIT: 2, PCI_FID: 3, PCI_CHID: 4, PCI_VENDOR: 5, PCI_DEVICE: 6, PCI_ID: 7, PORT: 8, PORT2: 9, IB_NAME: 10,
} as const;
const PORT = { PNET_USR: 1, PNETID: 2, NETDEV: 3, STATE: 4, VALID: 5, LNK_CNT: 6 } as const;
// what SMC-R reports for a port is smc_ib_port_active() (net/smc/smc_ib.c, every kernel since 5.11): 1 when
// the port is IB_PORT_ACTIVE, else 0; not the ib_port_state number (which would read 1 as "down")
const SMCR_PORT_STATE: Record<number, string> = { 0: 'inactive', 1: 'active' };

export interface SmcDevicePort {
  port: 1 | 2;
  /** the PNET ID this port belongs to ("" when none) */
  pnetId: string | null;
  /** the PNET ID was set by the user (smc_pnet), not by the firmware */
  pnetIdByUser: boolean | null;
  /** ifindex of the network device the port serves (in the kernel's view; 0 when none) */
  netdevIndex: number | null;
  state: string | null;
  /** SMC can use this port */
  valid: boolean | null;
  /** SMC-R links over this port */
  links: number | null;
}

export interface SmcDevice {
  kind: 'smcd' | 'smcr';
  /** the RDMA device name (SMC-R) */
  name: string | null;
  pciId: string | null;
  pciFid: number | null;
  pciChid: number | null;
  pciVendor: number | null;
  pciDevice: number | null;
  /** link groups (SMC-D) or links (SMC-R) using the device */
  useCount: number | null;
  /** the only device for some of its connections: removing it would break them */
  critical: boolean | null;
  ports: SmcDevicePort[];
}


function parsePort(a: Attrs, port: 1 | 2, kind: 'smcd' | 'smcr'): SmcDevicePort {
  const state = a.u8(PORT.STATE);
  return {
    port,
    pnetId: orNull(a.str(PORT.PNETID)?.trim()),
    pnetIdByUser: flag(a.u8(PORT.PNET_USR)),
    netdevIndex: orNull(a.u32(PORT.NETDEV)),
    state: state === undefined ? null : kind === 'smcr' ? (SMCR_PORT_STATE[state] ?? String(state)) : String(state),
    valid: flag(a.u8(PORT.VALID)),
    links: orNull(a.u32(PORT.LNK_CNT)),
  };
}

/** GET_DEV_SMCD / GET_DEV_SMCR: one message per device. */
export function parseDevices(msgs: readonly GenlMessage[], kind: 'smcd' | 'smcr'): SmcDevice[] {
  const top = kind === 'smcd' ? GEN.DEV_SMCD : GEN.DEV_SMCR;
  return msgs.map((m) => {
    const a = requiredNest(m.attrs, top, `${kind === 'smcd' ? 'SMC-D' : 'SMC-R'} device`);
    const ports: SmcDevicePort[] = [];
    const p1 = a.nested(DEV.PORT);
    const p2 = a.nested(DEV.PORT2);
    if (p1) ports.push(parsePort(p1, 1, kind));
    if (p2) ports.push(parsePort(p2, 2, kind));
    return {
      kind,
      name: orNull(a.str(DEV.IB_NAME)),
      pciId: orNull(a.str(DEV.PCI_ID)),
      pciFid: orNull(a.u32(DEV.PCI_FID)),
      pciChid: orNull(a.u16(DEV.PCI_CHID)),
      pciVendor: orNull(a.u16(DEV.PCI_VENDOR)),
      pciDevice: orNull(a.u16(DEV.PCI_DEVICE)),
      useCount: orNull(a.u32(DEV.USE_CNT)),
      critical: flag(a.u8(DEV.IS_CRIT)),
      ports,
    };
  });
}
