// The DIBS devices in sysfs (kernel 6.18+), which the SMC-D device dump does not list in full.
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * A DIBS device (Direct Internal Buffer Sharing, kernel 6.18+), from sysfs /sys/class/dibs/<name>: the
 * software loopback device `lo` (CONFIG_DIBS_LO, what loopback-ism became) or an s390 ISM device. SMC-D
 * uses every DIBS device; the SMC-D device dump still leaves the loopback one out.
 */
export interface DibsDevice {
  name: string;
  /** the device's GID as sysfs prints it (a UUID) */
  gid: string | null;
  fabricId: number | null;
  /** the DIBS loopback device (loopback-ism): named `lo`, no parent bus device */
  loopback: boolean;
}

/** Where the DIBS class lives in sysfs. */
export const DIBS_SYSFS = '/sys/class/dibs';

/**
 * The DIBS devices from sysfs, by name; null when the class does not exist (a kernel before 6.18, where
 * loopback-ism was CONFIG_SMC_LO and had no sysfs entry, or DIBS not built/loaded).
 */
export function readDibsDevices(sysfs = DIBS_SYSFS): DibsDevice[] | null {
  let names: string[];
  try {
    names = fs.readdirSync(sysfs).sort();
  } catch {
    return null;
  }
  const read = (name: string, file: string): string | null => {
    try {
      return fs.readFileSync(path.join(sysfs, name, file), 'utf8').trim() || null;
    } catch {
      return null;
    }
  };
  return names.map((name) => {
    const fabric = read(name, 'fabric_id');
    const fabricId = fabric !== null && /^(0x[0-9a-f]+|\d+)$/i.test(fabric) ? Number(fabric) : null;
    // ISM devices hang off a PCI function (a `device` link); the loopback device has no parent
    const parent = fs.existsSync(path.join(sysfs, name, 'device'));
    return { name, gid: read(name, 'gid'), fabricId, loopback: name === 'lo' && !parent };
  });
}
