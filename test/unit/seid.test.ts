// parseSeid: the parts of an s390 system EID as the kernel builds it (smc_ism_create_system_eid).
import { describe, expect, it } from 'vitest';
import { parseSeid } from '../../src/api/eid';

describe('parseSeid', () => {
  it('splits "IBM-SYSZ-ISMSEID00000000" + CPU identification + machine type', () => {
    expect(parseSeid('IBM-SYSZ-ISMSEID000000001A2B3906')).toEqual({ cpuIdent: '1A2B', machineType: '3906' });
  });

  it('is undefined for anything else (no SEID, another shape)', () => {
    expect(parseSeid('')).toBeUndefined();
    expect(parseSeid('IBM-SYSZ-ISMSEID000000001A2B390')).toBeUndefined();
    expect(parseSeid('SMC-RUN-TEST')).toBeUndefined();
  });
});
