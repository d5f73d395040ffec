// smc-run doctor: which mechanism puts this namespace's programs on SMC. The BPF switch (smc-run enable)
// reaches every program of the namespace; where it is off or impossible, only programs started by the
// launcher (the Node shim, the LD_PRELOAD library) are SMC.
import * as fs from 'node:fs';
import { loaderPath, probeKernel, switchImpossible, switchStatus } from '../bpf/switch';
import type { NetnsHandle } from '../netns';
import type { Check } from './checks';

const ID = 'mechanism.bpf_switch';
const LAUNCHER_ONLY = 'only programs started by the launcher (smc-run PROGRAM) are SMC here';

/** ipprotoSmc: whether IPPROTO_SMC sockets could be created (the switch makes those). */
export function bpfSwitchCheck(ns: NetnsHandle | undefined, ipprotoSmc: boolean): Check {
  const pid = ns === undefined ? undefined : /^\/proc\/(\d+)\/ns\/net$/.exec(ns.label)?.[1];
  const where = ns === undefined ? '--host' : pid !== undefined ? `--target ${pid}` : `--netns ${ns.label}`;
  if (loaderPath() === undefined) return { id: ID, status: 'info', message: `the BPF switch is not built for this machine: ${LAUNCHER_ONLY}` };
  try {
    const k = probeKernel();
    const why = switchImpossible(k) ?? (ipprotoSmc ? undefined : 'no IPPROTO_SMC sockets: Linux 6.11+ with CONFIG_SMC');
    if (why !== undefined) {
      return { id: ID, status: 'info', message: `the BPF switch is not possible on this kernel (${k.kernel}: ${why}): ${LAUNCHER_ONLY}` };
    }
    const inode = ns?.inode ?? fs.statSync('/proc/self/ns/net').ino;
    const on = switchStatus().namespaces.find((n) => n.inode === inode);
    if (on) return { id: ID, status: 'ok', message: `the BPF switch is on for this namespace: every new TCP socket of every program is SMC (${on.switched} so far), except sockets made through io_uring (IORING_OP_SOCKET bypasses the kernel's hook): they stay TCP` };
    return { id: ID, status: 'info', message: `the BPF switch is possible here but off: ${LAUNCHER_ONLY}; enabled, every program of the namespace would be (Go, static binaries, programs already running: for new sockets; not sockets made through io_uring, which bypass the kernel's hook)`, fix: `sudo smc-run enable ${where}` };
  } catch (e) {
    const code = (e as { code?: string }).code;
    const hint = code === 'EPERM' || code === 'EACCES' ? ': run as root to see it' : `: ${LAUNCHER_ONLY}`;
    return { id: ID, status: 'info', message: `cannot read the BPF switch's state (${(e as Error).message})${hint}` };
  }
}
