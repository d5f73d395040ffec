// loopback-ism on 6.18+ kernels: the DIBS class in sysfs (/sys/class/dibs/lo, CONFIG_DIBS_LO) read from a
// synthetic tree laid out as a 7.3 guest shows it, and what devices / info / doctor say with and without
// it. Before 6.18 (no class) loopback-ism is still inferred from system info and the device list.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loopbackIsmPresent, type SmcDevices, type SmcSystemInfo } from '../../src/api/system';
import { renderDevices, renderInfo } from '../../src/cli/system-view';
import { smcdDeviceText } from '../../src/doctor/checks';
import { readDibsDevices, type DibsDevice } from '../../src/topology/dibs';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-dibs-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** A /sys/class/dibs with the given devices (name -> gid, fabric_id, parent link or not). */
function sysfs(devices: Record<string, { gid: string; fabric: string; parent?: boolean }>): string {
  const dir = fs.mkdtempSync(path.join(root, 'class-'));
  for (const [name, d] of Object.entries(devices)) {
    const dev = path.join(dir, name);
    fs.mkdirSync(dev);
    fs.writeFileSync(path.join(dev, 'gid'), `${d.gid}\n`);
    fs.writeFileSync(path.join(dev, 'fabric_id'), `${d.fabric}\n`);
    if (d.parent) fs.symlinkSync(root, path.join(dev, 'device'));
  }
  return dir;
}

const LO_GID = '6e3a5c6d-7f4e-4a7b-9d1c-2b8e0f4a5c31';
const LO: DibsDevice = { name: 'lo', gid: LO_GID, fabricId: 0xffff, loopback: true };

describe('DIBS devices from sysfs', () => {
  it('the loopback device lo: gid, fabric id, no parent', () => {
    expect(readDibsDevices(sysfs({ lo: { gid: LO_GID, fabric: '0xffff' } }))).toEqual([LO]);
  });

  it('an ISM device (a PCI parent) is not loopback, nor is a device named lo with a parent', () => {
    const dir = sysfs({ '0000:00:04.0': { gid: 'a', fabric: '0x0001', parent: true }, lo: { gid: LO_GID, fabric: '0xffff' } });
    expect(readDibsDevices(dir)).toEqual([{ name: '0000:00:04.0', gid: 'a', fabricId: 1, loopback: false }, LO]);
    expect(readDibsDevices(sysfs({ lo: { gid: 'b', fabric: 'x', parent: true } }))).toEqual([{ name: 'lo', gid: 'b', fabricId: null, loopback: false }]);
  });

  it('no class (a kernel before 6.18): null; an empty class: no devices', () => {
    expect(readDibsDevices(path.join(root, 'nosuch'))).toBeNull();
    expect(readDibsDevices(sysfs({}))).toEqual([]);
  });

  it('loopback-ism: from DIBS when the class exists, else inferred from system info', () => {
    expect(loopbackIsmPresent(true, 0, [LO])).toBe(true);
    expect(loopbackIsmPresent(true, 1, [LO])).toBe(true); // listed ISM devices no longer hide it
    expect(loopbackIsmPresent(true, 1, [{ ...LO, name: 'ism0', loopback: false }])).toBe(false);
    expect(loopbackIsmPresent(true, 0, null)).toBe(true);
    expect(loopbackIsmPresent(false, 0, null)).toBe(false);
    expect(loopbackIsmPresent(true, 1, null)).toBeNull();
  });
});

describe('what devices, info and doctor say', () => {
  const devices = (dibs: DibsDevice[] | null, loopbackIsm: boolean | null): SmcDevices => ({ smcd: [], smcr: [], ismV2: loopbackIsm === true, loopbackIsm, dibs });
  const info = (ismV2: boolean, dibs: DibsDevice[] | null): SmcSystemInfo => ({
    version: 2, release: 1, ismV2, smcrV2: true, localHost: 'smcd', seid: '', dibs,
  });

  it('stats devices on 7.x: loopback-ism present as the DIBS device lo, and a DIBS table', () => {
    const out = renderDevices(devices([LO], true));
    expect(out).toContain('none listed (the kernel leaves loopback-ism out of this list)');
    expect(out).toContain('loopback-ism: present (the DIBS loopback device lo, /sys/class/dibs/lo)');
    expect(out).toMatch(/^DIBS devices \(6\.18\+: every SMC-D device, loopback included\)\n {2}Name +Kind +GID +Fabric\n {2}lo +loopback \(loopback-ism\) +6e3a5c6d-7f4e-4a7b-9d1c-2b8e0f4a5c31 +0xffff$/m);
  });

  it('stats devices on 6.12 (no DIBS class): inferred, no DIBS table', () => {
    const out = renderDevices(devices(null, true));
    expect(out).toContain('loopback-ism: present (system info: an ISMv2 device exists and none is listed, which is loopback-ism)');
    expect(out).not.toContain('DIBS');
    expect(renderDevices(devices(null, false))).toContain('loopback-ism needs CONFIG_SMC_LO on 6.10-6.17, CONFIG_DIBS_LO on 6.18+');
    expect(renderDevices(devices([], false))).toContain('absent (no DIBS loopback device in /sys/class/dibs; it needs CONFIG_DIBS_LO)');
  });

  it('stats info names the DIBS loopback device', () => {
    expect(renderInfo(info(true, [LO]))).toMatch(/^SMC-Dv2 \(ISMv2\) +yes \(the DIBS loopback device lo is present: loopback-ism\)$/m);
    expect(renderInfo(info(true, null))).toMatch(/^SMC-Dv2 \(ISMv2\) +yes \(an ISMv2 device is present: loopback-ism, or ISM on s390\)$/m);
    expect(renderInfo(info(false, null))).toMatch(/^SMC-Dv2 \(ISMv2\) +no \(no ISMv2 device; loopback-ism needs CONFIG_SMC_LO on 6\.10-6\.17, CONFIG_DIBS_LO on 6\.18\+\)$/m);
  });

  it('doctor names the DIBS loopback device when sysfs shows it', () => {
    expect(smcdDeviceText([LO])).toBe('SMC-D: an ISMv2 device is registered: the DIBS loopback device lo (loopback-ism; the kernel leaves it out of its SMC-D device list)');
    expect(smcdDeviceText(null)).toBe('SMC-D: an ISMv2 device is registered (loopback-ism on non-s390; the kernel leaves it out of its SMC-D device list)');
  });
});
