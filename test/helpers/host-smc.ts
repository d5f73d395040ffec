// Whether the kernel running the host suite has SMC, asked the way the shim asks: socket(AF_SMC) (which
// also loads the smc module where it is one). `npm test` passes on both kinds of host: tests whose
// answer depends on it pick their expectations here, at collection time, so neither kind skips a test.
import * as fs from 'node:fs';
import { AF_SMC, SMCPROTO_SMC } from '../../src/constants';
import { loadAddon } from '../../src/native';

function probe(): boolean {
  const a = loadAddon();
  // no addon yet (test:unit before a build): the sysctls exist exactly when the smc module is loaded
  if (!a.ok) return fs.existsSync('/proc/sys/net/smc');
  try {
    a.addon.closeFd(a.addon.createSocket(AF_SMC, SMCPROTO_SMC));
    return true;
  } catch {
    return false; // EAFNOSUPPORT on a kernel without SMC (and whatever an emulator answers instead)
  }
}

export const HOST_HAS_SMC = probe();
