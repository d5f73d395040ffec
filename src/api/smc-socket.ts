// Whether the kernel reports a socket as an SMC socket: SO_DOMAIN AF_SMC, or SO_PROTOCOL IPPROTO_SMC
// (an inet socket made with IPPROTO_SMC, 6.11+). isSmcSocket() and the promise API's retry ask this.
import { AF_SMC, IPPROTO_SMC, SOL_SOCKET, SO_DOMAIN, SO_PROTOCOL } from '../constants';
import { addon, type NativeAddon } from '../native';

/** Throws the addon's error (ENOADDON, or EBADF for a closed fd). */
export function kernelReportsSmc(fd: number, a: NativeAddon = addon()): boolean {
  return a.getSockOptInt(fd, SOL_SOCKET, SO_DOMAIN) === AF_SMC || a.getSockOptInt(fd, SOL_SOCKET, SO_PROTOCOL) === IPPROTO_SMC;
}
