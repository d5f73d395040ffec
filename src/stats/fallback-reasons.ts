// SMC CLC decline / fallback reason codes (net/smc/smc_clc.h SMC_CLC_DECL_*), each with a sentence a
// person understands and, where one exists, what to do about it.
export interface FallbackReason {
  code: number;
  name: string;
  description: string;
  fix: string | undefined;
}

const R = (code: number, name: string, description: string, fix?: string): FallbackReason => ({ code, name, description, fix });

const UEID_FIX = 'give both hosts the same UEID: smc-run ueid add <ID> (on each host)';

export const FALLBACK_REASONS: readonly FallbackReason[] = [
  R(0x01010000, 'MEM', 'the kernel could not allocate SMC buffers (memory pressure)', 'free memory, or lower net.smc.wmem/rmem'),
  R(0x02010000, 'TIMEOUT_CL', 'the peer did not answer the SMC handshake in time (waiting for CLC confirm)'),
  R(0x02020000, 'TIMEOUT_AL', 'the peer did not answer the SMC handshake in time (waiting for CLC accept)'),
  R(0x03000000, 'CNFERR', 'the SMC configuration was rejected during the handshake'),
  R(0x03010000, 'PEERNOSMC', 'the peer does not speak SMC (a plain TCP socket on the other end)', 'run the peer under smc-run too (or another SMC-enabled program)'),
  R(0x03020000, 'IPSEC', 'the connection uses IPsec, which SMC does not support'),
  R(0x03030000, 'NOSMCDEV', 'no SMC device fits this connection (no RoCE/ISM device for the route, or no UEID for SMC-Rv2)', `check devices with smc-run doctor; for SoftRoCE/RoCEv2 ${UEID_FIX}`),
  R(0x03030001, 'NOSMCDDEV', 'no SMC-D (ISM) device fits this connection'),
  R(0x03030002, 'NOSMCRDEV', 'no SMC-R (RoCE) device fits this connection', 'bind an RDMA device to the interface the route uses (e.g. rdma link add rxe0 type rxe netdev eth0)'),
  R(0x03030003, 'NOISM2SUPP', 'no ISMv2 device is available for SMC-Dv2'),
  R(0x03030004, 'NOV2EXT', 'the peer sent no SMCv2 extension'),
  R(0x03030005, 'NOV2DEXT', 'the peer sent no SMC-Dv2 extension'),
  R(0x03030006, 'NOSEID', 'the peer sent no system EID (SEID)'),
  R(0x03030007, 'NOSMCD2DEV', 'no SMC-Dv2 device fits this connection'),
  R(0x03030008, 'NOUEID', 'the peer sent no UEID, so SMCv2 cannot be negotiated (the silent-fallback trap)', UEID_FIX),
  R(0x03030009, 'RELEASEERR', 'the peer released the connection during the handshake'),
  R(0x0303000a, 'MAXCONNERR', 'the link group has reached its maximum number of connections', 'raise net.smc.smcr_max_conns_per_lgr'),
  R(0x0303000b, 'MAXLINKERR', 'the link group has reached its maximum number of links', 'raise net.smc.smcr_max_links_per_lgr'),
  R(0x03040000, 'MODEUNSUPP', 'the peer does not support the proposed SMC mode'),
  R(0x03050000, 'RMBE_EC', 'the peer could not use the proposed buffer (RMBE eye catcher mismatch)'),
  R(0x03060000, 'OPTUNSUPP', "a socket option SMC does not support was set before connect (TCP_FASTOPEN*), or smc-run's --include/--exclude kept this connection on TCP (the LD_PRELOAD library switches an excluded socket that way)", 'expected for destinations smc-run excludes; otherwise do not set TCP_FASTOPEN (or similar) on SMC sockets'),
  R(0x03070000, 'DIFFPREFIX', 'the peers are in different IP subnets, which SMC-Rv1/SMC-Dv1 require'),
  R(0x03080000, 'GETVLANERR', 'the VLAN id of the interface could not be read'),
  R(0x03090000, 'ISMVLANERR', 'the ISM device could not register the VLAN'),
  R(0x030a0000, 'NOACTLINK', 'the link group has no active link'),
  R(0x030b0000, 'NOSRVLINK', 'the SMC-R link to the server could not be established'),
  R(0x030c0000, 'VERSMISMAT', 'the peers support no common SMC version'),
  R(0x030d0000, 'MAX_DMB', 'no free DMB (SMC-D buffer) is left on the device', 'close idle connections, or lower the connection count'),
  R(0x030e0000, 'NOROUTE', 'the peer has no route back for SMC-Rv2'),
  R(0x030f0000, 'NOINDIRECT', 'SMC-Rv2 indirect links are not supported by the peer'),
  R(0x04000000, 'SYNCERR', 'the peers lost synchronisation during the handshake'),
  R(0x05000000, 'PEERDECL', 'the peer declined SMC (its own reason is the peer diagnosis)'),
  R(0x09990000, 'INTERR', 'an internal SMC error occurred'),
  R(0x09990001, 'ERR_RTOK', 'an RDMA token exchange failed'),
  R(0x09990002, 'ERR_RDYLNK', 'the SMC-R link was not ready'),
  R(0x09990003, 'ERR_REGBUF', 'the RDMA buffer could not be registered'),
];

const BY_CODE = new Map(FALLBACK_REASONS.map((r) => [r.code, r]));

/** The reason for a code; codes this table does not know get a generic entry with the hex code. */
export function fallbackReason(code: number): FallbackReason {
  const known = BY_CODE.get(code);
  if (known) return known;
  // the kernel may OR the "peer" flag into codes; fall back to the class (top 2 bytes)
  const cls = BY_CODE.get(code & 0xffff0000);
  const hex = `0x${code.toString(16).padStart(8, '0')}`;
  if (cls) return { ...cls, code, name: `${cls.name}(${hex})` };
  return { code, name: hex, description: `unknown SMC fallback reason ${hex}`, fix: undefined };
}

export const fallbackReasonByName = (name: string): FallbackReason | undefined => FALLBACK_REASONS.find((r) => r.name === name);
