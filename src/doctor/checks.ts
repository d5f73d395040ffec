// smc-run doctor: the checks that explain why connections are (or will be) TCP instead of SMC, each
// ok / warn / fail / info with one line of explanation and, where there is one, the command that fixes it.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AF_INET, AF_SMC, IPPROTO_SMC, SMCPROTO_SMC } from '../constants';
import { addonFix, loadAddon, isSystemError, firstLine } from '../native';
import { pinned, withNetns, type NamespaceTarget, type NetnsHandle } from '../netns';
import { SmcGenl, type SysInfo } from '../netlink/smc-genl';
import { dumpSmcSockets, openSockDiag } from '../netlink/sockdiag';
import { listSmcSysctls } from '../sysctl';
import { kernelAtLeast } from '../sysctl/schema';
import { readDibsDevices, type DibsDevice } from '../topology/dibs';
import type { SmcDevice } from '../topology/devices';
import { getSmcDevices } from '../api/system';
import { formatSize } from '../units';
import { burstChecks, readBurstFacts } from './burst';
import { LAUNCHER_PATH } from '../launcher/spawn';
import { noticeMarkerPath } from '../hook/notice';
import { bpfSwitchCheck } from './bpf-switch';

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'info';

export interface Check {
  id: string;
  status: CheckStatus;
  message: string;
  fix?: string | undefined;
}

const ok = (id: string, message: string): Check => ({ id, status: 'ok', message });
const warn = (id: string, message: string, fix?: string): Check => ({ id, status: 'warn', message, fix });
const fail = (id: string, message: string, fix?: string): Check => ({ id, status: 'fail', message, fix });
const info = (id: string, message: string, fix?: string): Check => ({ id, status: 'info', message, fix });

const codeOf = (e: unknown): string => (isSystemError(e) ? e.code : firstLine(String(e)));

export interface RdmaPort {
  device: string;
  port: number;
  state: string;
  netdevs: string[];
  gidTypes: string[];
}

/** RDMA devices and their ports from sysfs (what SMC-R can use). */
export function rdmaPorts(sysfs = '/sys/class/infiniband'): RdmaPort[] {
  const out: RdmaPort[] = [];
  let devices: string[] = [];
  try {
    devices = fs.readdirSync(sysfs);
  } catch {
    return out;
  }
  const read = (p: string): string => {
    try {
      return fs.readFileSync(p, 'utf8').trim();
    } catch {
      return '';
    }
  };
  for (const device of devices) {
    const portsDir = path.join(sysfs, device, 'ports');
    let ports: string[] = [];
    try {
      ports = fs.readdirSync(portsDir);
    } catch {
      continue;
    }
    for (const port of ports) {
      const base = path.join(portsDir, port);
      const gidTypes = new Set<string>();
      const netdevs = new Set<string>();
      let idx: string[] = [];
      try {
        idx = fs.readdirSync(path.join(base, 'gid_attrs', 'types'));
      } catch {
        /* no RoCE attributes (InfiniBand) */
      }
      for (const i of idx) {
        const t = read(path.join(base, 'gid_attrs', 'types', i));
        if (t) gidTypes.add(t);
        const n = read(path.join(base, 'gid_attrs', 'ndevs', i));
        if (n) netdevs.add(n);
      }
      out.push({ device, port: Number(port), state: read(path.join(base, 'state')).replace(/^\d+:\s*/, ''), netdevs: [...netdevs], gidTypes: [...gidTypes] });
    }
  }
  return out;
}

/** What doctor says about a registered ISMv2 device: 6.18+ names the DIBS loopback device (sysfs). */
export function smcdDeviceText(dibs: readonly DibsDevice[] | null): string {
  const lo = dibs?.find((d) => d.loopback);
  if (lo) return `SMC-D: an ISMv2 device is registered: the DIBS loopback device ${lo.name} (loopback-ism; the kernel leaves it out of its SMC-D device list)`;
  return 'SMC-D: an ISMv2 device is registered (loopback-ism on non-s390; the kernel leaves it out of its SMC-D device list)';
}

// SMC picks an RDMA port for a connection by the interface the route leaves through: it learns a port's
// interface from the RDMA driver, or from a PNET ID given to both. Before the fix "net/smc: Fix lookup of
// netdev by using ib_device_get_netdev()" (Linux 6.12; Debian 12's 6.1 lacks it) SMC asked the driver's
// ops.get_netdev, which SoftRoCE (rdma_rxe) and newer mlx5 do not implement: such ports are never chosen.
// A PNET ID pairs them, but with SoftRoCE on 6.1 (Debian 12's 6.1.176) the SMC-R link setup then fails and
// the kernel hangs freeing the link (smc_wr_drain_cq): for SoftRoCE the remedy is a newer kernel.
const SMC_NETDEV_LOOKUP = 'SMC before Linux 6.12 asks the RDMA driver, and SoftRoCE (rdma_rxe) does not answer';
const smcNetdevFix = (p: RdmaPort): string =>
  `use Linux 6.12+; with RoCE hardware a PNET ID shared by port and interface on both hosts also works (smc-tools: smc_pnet -a ID -I ${p.netdevs[0]} -D ${p.device} -P ${p.port}), but not with SoftRoCE on 6.1 (the SMC-R link setup hangs in the kernel)`;

/** Active RDMA ports bound to an interface (sysfs) that SMC's device list shows with neither net device nor PNET ID. */
function portsSmcCannotPlace(target: NamespaceTarget, active: RdmaPort[]): RdmaPort[] {
  let devices: SmcDevice[];
  try {
    devices = getSmcDevices(target).smcr;
  } catch {
    return []; // no SMC genl: kernel.genl says so
  }
  return active.filter((p) => p.netdevs.length > 0 &&
    devices.some((d) => d.name === p.device && d.ports.some((q) => q.port === p.port && q.netdevIndex === 0 && !q.pnetId)));
}

export interface DoctorFacts {
  afSmc: boolean;
  sysInfo: SysInfo | undefined;
  ueids: string[] | undefined;
  rdma: RdmaPort[];
}

/** Kernel, devices, EID, sysctls, Node side and known limits; the live self-tests are in selftest.ts. */
export function runChecks(target: NamespaceTarget): { checks: Check[]; facts: DoctorFacts } {
  // every check below reads the one namespace opened here (by its handle), not the PID or name again
  return withNetns(target, (ns) => checksIn(ns));
}

function checksIn(ns: NetnsHandle | undefined): { checks: Check[]; facts: DoctorFacts } {
  const target = pinned(ns);
  const checks: Check[] = [];
  const facts: DoctorFacts = { afSmc: false, sysInfo: undefined, ueids: undefined, rdma: [] };
  const loaded = loadAddon();

  // ---- Node side first: without the addon nothing below can be probed
  if (!loaded.ok) {
    checks.push(fail('node.addon', `the native addon does not load on node ${process.version}: ${firstLine(loaded.error.message)}`, addonFix()));
    return { checks, facts };
  }
  checks.push(ok('node.addon', `native addon loads on node ${process.version}`));
  const addon = loaded.addon;

  // ---- kernel
  const release = os.release();
  try {
    addon.closeFd(addon.createSocket(AF_SMC, SMCPROTO_SMC));
    facts.afSmc = true;
    checks.push(ok('kernel.af_smc', `AF_SMC sockets can be created (kernel ${release})`));
  } catch (e) {
    checks.push(fail('kernel.af_smc', `AF_SMC sockets cannot be created (${codeOf(e)}, kernel ${release}): every connection stays TCP`, 'modprobe smc smc_diag (the kernel needs CONFIG_SMC)'));
  }
  let ipprotoSmc = false;
  try {
    addon.closeFd(addon.createSocket(AF_INET, IPPROTO_SMC));
    ipprotoSmc = true;
    checks.push(ok('kernel.ipproto_smc', 'IPPROTO_SMC sockets can be created (--proto ipproto available)'));
  } catch (e) {
    checks.push(info('kernel.ipproto_smc', `IPPROTO_SMC unavailable (${codeOf(e)}; kernel 6.11+): smc-run uses AF_SMC`));
  }
  checks.push(bpfSwitchCheck(ns, ipprotoSmc));
  if (!facts.afSmc) return { checks, facts };
  try {
    const nl = openSockDiag(ns?.path);
    try {
      dumpSmcSockets(nl, 0);
    } finally {
      nl.close();
    }
    checks.push(ok('kernel.sock_diag', 'SMC sock_diag works (per-connection modes and fallback reasons are visible)'));
  } catch (e) {
    checks.push(warn('kernel.sock_diag', `SMC sock_diag unavailable (${codeOf(e)}): getSmcInfo and stats sockets cannot see SMC modes`, 'modprobe smc_diag (CONFIG_SMC_DIAG)'));
  }
  try {
    SmcGenl.with(ns?.path, (g) => {
      facts.sysInfo = g.sysInfo();
      facts.ueids = g.ueids();
    });
    checks.push(ok('kernel.genl', `SMC generic netlink works (SMC v${facts.sysInfo?.version ?? '?'}.${facts.sysInfo?.release ?? '?'})`));
  } catch (e) {
    checks.push(fail('kernel.genl', `SMC generic netlink (SMC_GEN_NETLINK) unavailable (${codeOf(e)}): cannot read devices or UEIDs`, 'use a kernel with CONFIG_SMC 5.11+'));
  }

  // ---- devices
  const si = facts.sysInfo;
  const smcd = si?.ismV2 === true;
  // what loopback-ism would take on this kernel: nothing an option can give before 6.10
  const noLoopback = !kernelAtLeast(release, '6.10')
    ? `this kernel (${release}) predates loopback-ism, which came in Linux 6.10`
    : `loopback-ism needs ${kernelAtLeast(release, '6.18') ? 'CONFIG_DIBS and CONFIG_DIBS_LO' : 'CONFIG_SMC_LO'}`;
  checks.push(smcd
    ? ok('devices.smcd', smcdDeviceText(readDibsDevices()))
    : info('devices.smcd', `SMC-D: no ISM or loopback-ism device (${noLoopback}): connections inside this host cannot use SMC-D`));
  facts.rdma = rdmaPorts();
  const active = facts.rdma.filter((p) => p.state === 'ACTIVE');
  if (active.length > 0) {
    const desc = active.map((p) => `${p.device}/${p.port} on ${p.netdevs.join(',') || '?'} (${p.gidTypes.join(', ') || 'IB'})`).join('; ');
    checks.push(ok('devices.smcr', `SMC-R: RDMA ports active: ${desc}`));
  } else if (facts.rdma.length > 0) {
    checks.push(warn('devices.smcr', `SMC-R: RDMA devices present but no port is ACTIVE (${facts.rdma.map((p) => `${p.device}/${p.port} ${p.state}`).join(', ')})`, 'bring the bound network interface up'));
  } else {
    checks.push(info('devices.smcr', 'SMC-R: no RDMA device (a RoCE NIC, or SoftRoCE: rdma link add rxe0 type rxe netdev eth0)'));
  }
  const blind = active.length > 0 ? portsSmcCannotPlace(target, active) : [];
  if (blind.length > 0) {
    const names = blind.map((p) => `${p.device}/${p.port} (on ${p.netdevs.join(',')})`).join(', ');
    checks.push(warn('devices.smcr_netdev', `SMC-R: the kernel's SMC does not know which interface ${names} serves (its device list shows no net device and no PNET ID; ${SMC_NETDEV_LOOKUP}): connections fall back with NOSMCDEV`, smcNetdevFix(blind[0] as RdmaPort)));
  }
  const v2Only = active.length > 0 && active.every((p) => p.gidTypes.length > 0 && p.gidTypes.every((t) => /v2/i.test(t)));
  if (!smcd && active.length === 0) {
    checks.push(fail('devices.any', 'no SMC device at all: every connection will fall back to TCP (NOSMCDEV)', 'add an RDMA device (SMC-R) or use a kernel with loopback-ism (SMC-D)'));
  }

  // ---- EIDs: SMC-Dv2 (loopback-ism is ISMv2 only) and SMC-Rv2 (RoCE v2 only) need a UEID or SEID
  if (si) {
    const hasSeid = (si.seid ?? '') !== '';
    const ueids = facts.ueids ?? [];
    const needsEid = smcd || v2Only;
    if (ueids.length > 0) checks.push(ok('eid.ueid', `UEID set: ${ueids.join(', ')} (peers must share one)`));
    else if (hasSeid) checks.push(ok('eid.seid', `system EID set: ${si.seid}`));
    else if (needsEid) {
      checks.push(fail('eid.none', 'no UEID and no system EID: SMCv2 cannot be negotiated, every connection will fall back (NOUEID)', 'smc-run ueid add <ID> (the same ID on both hosts; root)'));
    } else {
      checks.push(info('eid.none', 'no UEID: only SMCv1 (RoCE v1 / ISMv1) can be negotiated'));
    }
  }

  // ---- sysctls of the target namespace
  let limitSmcHs: number | undefined;
  try {
    const values = new Map(listSmcSysctls(target).map((s) => [s.name, s.value]));
    const ac = values.get('autocorking_size');
    if (ac === 0) checks.push(warn('sysctl.autocorking_size', 'net.smc.autocorking_size is 0: small writes on SMC-R go out one by one (measured: 1-byte writes reach the peer 58x slower, 64-byte 16x; bench/REPORT.md)', 'smc-run sysctl set autocorking_size=64k'));
    else if (ac !== undefined) checks.push(ok('sysctl.autocorking_size', `net.smc.autocorking_size ${formatSize(Number(ac))} (coalesces small writes on SMC-R)`));
    const wmem = Number(values.get('wmem') ?? 0);
    const rmem = Number(values.get('rmem') ?? 0);
    // SMC-D advice only where SMC-D can happen (an ISM or loopback-ism device is there)
    if (smcd && wmem > 0 && (wmem <= 65536 || rmem <= 65536)) {
      checks.push(info('sysctl.buffers', `net.smc.wmem/rmem ${formatSize(wmem)}/${formatSize(rmem)}: SMC-D bulk transfers are slower than TCP until raised (SMC-D caps buffers at 1 MiB)`, 'smc-run sysctl set wmem=1M rmem=1M, or per program: smc-run -t 1M -r 1M'));
    }
    const hs = values.get('limit_smc_hs');
    limitSmcHs = hs === undefined ? undefined : Number(hs);
  } catch (e) {
    checks.push(warn('sysctl.read', `cannot read net.smc sysctls: ${firstLine((e as Error).message)}`));
  }
  for (const [name, opt] of [['wmem_max', '-t'], ['rmem_max', '-r']] as const) {
    try {
      const v = Number(fs.readFileSync(`/proc/sys/net/core/${name}`, 'utf8').trim());
      if (v < 1 << 20) checks.push(info(`sysctl.core.${name}`, `net.core.${name} ${formatSize(v)} caps smc-run ${opt} at about ${formatSize(v)}`, `sysctl -w net.core.${name}=1048576`));
    } catch {
      /* not readable */
    }
  }

  // ---- connection bursts: handshake limitation, backlog cap, handshake errors so far
  checks.push(...burstChecks(readBurstFacts(target, limitSmcHs)));

  // ---- the launcher's preload in a child node
  checks.push(preloadCheck());

  // ---- known kernel limits that affect applications
  checks.push(info('limits.keepalive', 'setKeepAlive() reads back but no keepalive timer runs on SMC connections (kernel limitation): use application heartbeats'));
  checks.push(info('limits.tcp_info', 'TCP_INFO describes the handshake socket and undercounts SMC traffic: use getSmcInfo() / smc-run stats'));
  return { checks, facts };
}

function preloadCheck(): Check {
  // the launcher itself (bin/smc-run, run through sh as `node bin/smc-run` does) starts a child node; the
  // preload starts the hook at a thread's first TCP handle operation: the child makes one (a loopback
  // listener) and says whether the hook is there, and its session (to remove its notice marker after)
  const probe = "require('net').createServer().listen(0,'127.0.0.1',function(){this.close();process.stdout.write(JSON.stringify({hook:globalThis[Symbol.for('smc-run.hook')]!==undefined,session:process.env.SMC_RUN_SESSION}))}).on('error',()=>process.stdout.write('{}'))";
  const r = spawnSync('/bin/sh', [LAUNCHER_PATH, process.execPath, '-e', probe], { encoding: 'utf8', timeout: 60_000 });
  let seen: { hook?: boolean; session?: string } = {};
  try {
    seen = JSON.parse(r.stdout) as typeof seen;
  } catch {
    /* no answer: reported below */
  }
  const marker = seen.session === undefined ? undefined : noticeMarkerPath(seen.session);
  if (marker !== undefined) fs.rmSync(marker, { force: true });
  if (seen.hook === true) return ok('node.preload', 'the launcher (bin/smc-run) installs the hook in a child node process');
  const why = firstLine((r.stderr ?? '').replace(/^.*smc-run(\[\d+\])?: /, '')) || `exit ${r.status}`;
  return fail('node.preload', `the launcher (bin/smc-run) does not install the hook in a child node (${why})`);
}
