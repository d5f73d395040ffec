// net.smc sysctl schema, validation and the list/get/set logic, against an in-memory namespace (the
// host has no SMC; the real /proc/sys/net/smc is exercised by test/kernel/smcd/sysctl.test.ts).
import fc from 'fast-check';
import { fuzzRuns } from '../helpers/fuzz';
import { describe, expect, it } from 'vitest';
import { TargetError } from '../../src/netns';
import { SysctlError } from '../../src/sysctl/errors';
import { checkName, listFrom, parseAssignment, readFrom, validateForExport, writeTo } from '../../src/sysctl';
import type { SmcSysctlFiles } from '../../src/sysctl/procfs';
import { compareWithSchema, kernelAtLeast, kernelVersion, normalizeName, parseKernelValue, parseSysctlValue, rangeText, specOf, SYSCTL_SCHEMA } from '../../src/sysctl/schema';

/** What a 6.12 kernel shows in a fresh namespace. */
const FRESH_612: Record<string, string> = {
  autocorking_size: '65536',
  limit_smc_hs: '0',
  rmem: '65536',
  smcr_buf_type: '0',
  smcr_max_conns_per_lgr: '255',
  smcr_max_links_per_lgr: '2',
  smcr_testlink_time: '30',
  wmem: '65536',
};

/** How the fake kernel answers one write: throw to refuse it. */
type Refusal = (name: string, text: string, how: 'write' | 'restore') => void;

/**
 * An in-memory namespace; `writes` records every write that reached "the kernel" (restores marked), and
 * `refuse` can make the kernel refuse a write, as the real procfs layer throws.
 */
function fakeNamespace(values: Record<string, string> = FRESH_612, refuse: Refusal = () => undefined) {
  const state = { ...values };
  const writes: [string, string, ...('restore' | 'refused')[]][] = [];
  const put = (how: 'write' | 'restore') => (name: string, text: string) => {
    try {
      refuse(name, text, how);
    } catch (e) {
      writes.push(how === 'restore' ? [name, text, 'restore', 'refused'] : [name, text, 'refused']);
      throw e;
    }
    writes.push(how === 'restore' ? [name, text, 'restore'] : [name, text]);
    state[name] = text;
  };
  const files: SmcSysctlFiles = {
    ns: undefined,
    names: Object.keys(state).sort(),
    read: (name) => {
      const v = state[name];
      if (v === undefined) throw new Error(`read of ${name}`);
      return v;
    },
    write: put('write'),
    restore: put('restore'),
  };
  return { files, state, writes };
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SysctlError);
    return (e as SysctlError).code;
  }
  return undefined;
}

describe('schema', () => {
  it('knows the eleven net.smc sysctls with a range, default, unit, version and meaning', () => {
    expect(SYSCTL_SCHEMA.map((s) => s.name).sort()).toEqual(
      ['autocorking_size', 'hs_ctrl', 'limit_smc_hs', 'rmem', 'smcr_buf_type', 'smcr_max_conns_per_lgr', 'smcr_max_links_per_lgr', 'smcr_max_recv_wr', 'smcr_max_send_wr', 'smcr_testlink_time', 'wmem'],
    );
    for (const s of SYSCTL_SCHEMA) {
      expect(s.since, s.name).toMatch(/^\d+\.\d+$/);
      expect(s.meaning.length, s.name).toBeGreaterThan(20);
      expect(s.meaning, s.name).not.toContain('\n');
      expect(s.matters.length, s.name).toBeGreaterThan(10);
      if (s.type !== 'string') {
        expect(s.min, s.name).toBeLessThanOrEqual(s.default as number);
        expect(s.max, s.name).toBeGreaterThanOrEqual(s.default as number);
      }
    }
  });

  it('has the kernel defaults and ranges', () => {
    expect(specOf('autocorking_size')).toMatchObject({ default: 65536, min: 0, max: 4294967295, unit: 'bytes' });
    expect(specOf('wmem')).toMatchObject({ default: 65536, min: 16384, max: 1073741823 });
    expect(specOf('rmem')).toMatchObject({ default: 65536, min: 16384, max: 1073741823 });
    expect(specOf('smcr_max_conns_per_lgr')).toMatchObject({ default: 255, min: 16, max: 255 });
    expect(specOf('smcr_max_send_wr')).toMatchObject({ default: 16, min: 2, max: 2048 });
    expect(specOf('smcr_max_recv_wr')).toMatchObject({ default: 48, min: 2, max: 2048 });
    expect(specOf('limit_smc_hs')).toMatchObject({ default: 0, min: 0, max: 1 });
    expect(specOf('hs_ctrl')).toMatchObject({ type: 'string', default: '' });
  });

  it("has 6.19's work-request sysctls (int, 2..2048) and hs_ctrl (a struct_ops name, only with CONFIG_SMC_HS_CTRL_BPF)", () => {
    expect(specOf('smcr_max_send_wr')).toMatchObject({ type: 'int', unit: 'count', default: 16, min: 2, max: 2048, since: '6.19' });
    expect(specOf('smcr_max_recv_wr')).toMatchObject({ type: 'int', unit: 'count', default: 48, min: 2, max: 2048, since: '6.19' });
    expect(specOf('hs_ctrl')).toMatchObject({ type: 'string', unit: 'name', maxLength: 15, default: '', since: '6.19', requires: 'CONFIG_SMC_HS_CTRL_BPF' });
    // every other sysctl is there on every kernel since its version
    expect(SYSCTL_SCHEMA.filter((s) => s.requires).map((s) => s.name)).toEqual(['hs_ctrl']);
  });

  it('says when a sysctl matters', () => {
    expect(specOf('autocorking_size')?.matters).toMatch(/SMC-R only/);
    expect(specOf('wmem')?.matters).toMatch(/SMC-D bulk/);
    expect(specOf('wmem')?.matters).toMatch(/1 MiB/);
    expect(specOf('limit_smc_hs')?.matters).toMatch(/netlink/);
  });

  it('words ranges for messages', () => {
    expect(rangeText(specOf('wmem')!)).toBe('16384 (16k) .. 1073741823 bytes');
    expect(rangeText(specOf('smcr_buf_type')!)).toBe('0 .. 2 (0 physically contiguous, 1 virtually contiguous, 2 physical first, else virtual)');
    expect(rangeText(specOf('smcr_testlink_time')!)).toBe('0 .. 2147483 seconds');
  });
});

describe('schema against a kernel listing', () => {
  /** what Debian 12's 6.1 shows (observed in the smcr-6.1 lane) */
  const FRESH_61 = ['autocorking_size', 'rmem', 'smcr_buf_type', 'smcr_testlink_time', 'wmem'];
  const FRESH_619 = [...Object.keys(FRESH_612), 'smcr_max_recv_wr', 'smcr_max_send_wr', 'hs_ctrl'];

  it('reads kernel versions from release strings', () => {
    expect(kernelVersion('6.1.0-50-amd64')).toEqual([6, 1]);
    expect(kernelVersion('6.12.57+deb13-amd64')).toEqual([6, 12]);
    expect(kernelVersion('7.3.4')).toEqual([7, 3]);
    expect(kernelVersion('nonsense')).toBeUndefined();
    expect(kernelAtLeast('6.1.0-50-amd64', '6.1')).toBe(true);
    expect(kernelAtLeast('6.1.0-50-amd64', '6.10')).toBe(false); // 6.10 is not 6.1
    expect(kernelAtLeast('6.12.57+deb13-amd64', '6.6')).toBe(true);
    expect(kernelAtLeast('7.0.1', '6.19')).toBe(true);
    expect(kernelAtLeast('garbage', '5.18')).toBe(false);
  });

  it('matches the listings of 6.1, 6.12 and 6.19 exactly', () => {
    expect(compareWithSchema('6.1.0-50-amd64', FRESH_61)).toEqual({ unknown: [], missing: [], early: [], optionalAbsent: [] });
    expect(compareWithSchema('6.12.57+deb13-amd64', Object.keys(FRESH_612))).toEqual({ unknown: [], missing: [], early: [], optionalAbsent: [] });
    expect(compareWithSchema('6.19.0', FRESH_619)).toEqual({ unknown: [], missing: [], early: [], optionalAbsent: [] });
  });

  it('names what a kernel has that the schema lacks, and what the schema claims that the kernel lacks', () => {
    expect(compareWithSchema('6.12.0', [...Object.keys(FRESH_612), 'future_knob']).unknown).toEqual(['future_knob']);
    expect(compareWithSchema('6.12.0', FRESH_61).missing).toEqual(['smcr_max_links_per_lgr', 'smcr_max_conns_per_lgr', 'limit_smc_hs']);
    expect(compareWithSchema('6.1.0', [...FRESH_61, 'limit_smc_hs']).early).toEqual(['limit_smc_hs']);
  });

  it('expects hs_ctrl on 6.19+ only with its kernel option: absent is no mismatch', () => {
    const without = FRESH_619.filter((n) => n !== 'hs_ctrl');
    expect(compareWithSchema('6.19.2', without)).toEqual({ unknown: [], missing: [], early: [], optionalAbsent: ['hs_ctrl'] });
    expect(compareWithSchema('6.19.2', without.filter((n) => n !== 'smcr_max_send_wr')).missing).toEqual(['smcr_max_send_wr']);
  });
});

describe('values', () => {
  const v = (name: string, input: number | string): string => parseSysctlValue(name, specOf(name), input);

  it('takes sizes as people write them, in kernel form', () => {
    expect(v('wmem', '64k')).toBe('65536');
    expect(v('wmem', '1M')).toBe('1048576');
    expect(v('rmem', '1MiB')).toBe('1048576');
    expect(v('rmem', ' 256K ')).toBe('262144');
    expect(v('autocorking_size', '0')).toBe('0');
    expect(v('autocorking_size', 0)).toBe('0');
    expect(v('wmem', 16384)).toBe('16384');
  });

  it('refuses malformed values with EINVAL and names the range', () => {
    expect(codeOf(() => v('wmem', 'abc'))).toBe('EINVAL');
    expect(codeOf(() => v('wmem', '1.5M'))).toBe('EINVAL');
    expect(codeOf(() => v('smcr_buf_type', 'virtual'))).toBe('EINVAL');
    expect(codeOf(() => v('smcr_max_conns_per_lgr', '1k'))).toBe('EINVAL'); // sizes only for byte sysctls
    expect(codeOf(() => v('limit_smc_hs', 0.5))).toBe('EINVAL');
    expect(codeOf(() => v('limit_smc_hs', ''))).toBe('EINVAL');
    expect(() => v('wmem', 'abc')).toThrow(/accepted: 16384 \(16k\) \.\. 1073741823 bytes/);
  });

  it('refuses out-of-range values with ERANGE and names the range', () => {
    expect(codeOf(() => v('wmem', '1k'))).toBe('ERANGE');
    expect(codeOf(() => v('wmem', '2G'))).toBe('ERANGE');
    expect(codeOf(() => v('autocorking_size', -1))).toBe('ERANGE');
    expect(codeOf(() => v('autocorking_size', '4294967296'))).toBe('ERANGE');
    expect(codeOf(() => v('smcr_buf_type', 3))).toBe('ERANGE');
    expect(codeOf(() => v('limit_smc_hs', '2'))).toBe('ERANGE');
    expect(codeOf(() => v('smcr_max_conns_per_lgr', '15'))).toBe('ERANGE');
    expect(codeOf(() => v('smcr_max_send_wr', '4096'))).toBe('ERANGE');
    expect(codeOf(() => v('autocorking_size', '99999999999999999999'))).toBe('ERANGE');
    expect(() => v('smcr_max_conns_per_lgr', '15')).toThrow('net.smc.smcr_max_conns_per_lgr: 15 is out of range; accepted: 16 .. 255');
  });

  it('accepts every integer in range and only those (property)', () => {
    for (const spec of SYSCTL_SCHEMA.filter((s) => s.type !== 'string')) {
      fc.assert(
        fc.property(fc.integer({ min: -(2 ** 40), max: 2 ** 40 }), (n) => {
          const inRange = n >= spec.min! && n <= spec.max!;
          if (inRange) expect(parseSysctlValue(spec.name, spec, String(n))).toBe(String(n));
          else expect(codeOf(() => parseSysctlValue(spec.name, spec, n))).toBe('ERANGE');
        }),
        { numRuns: fuzzRuns(200) },
      );
    }
  });

  it('hs_ctrl takes a short name or "" and no line breaks', () => {
    expect(v('hs_ctrl', '')).toBe('');
    expect(v('hs_ctrl', 'my_ctrl')).toBe('my_ctrl');
    expect(codeOf(() => v('hs_ctrl', 'a\nb'))).toBe('EINVAL');
    expect(codeOf(() => v('hs_ctrl', 'has space'))).toBe('EINVAL');
    expect(codeOf(() => v('hs_ctrl', 'x'.repeat(16)))).toBe('ERANGE');
  });

  it('passes plain one-line values of sysctls it does not know to the kernel, nothing else', () => {
    expect(parseSysctlValue('future_knob', undefined, '7')).toBe('7');
    expect(codeOf(() => parseSysctlValue('future_knob', undefined, '7\n8'))).toBe('EINVAL');
    expect(codeOf(() => parseSysctlValue('future_knob', undefined, '\x00'))).toBe('EINVAL');
  });

  it('types what the kernel prints', () => {
    expect(parseKernelValue(specOf('wmem'), '65536')).toBe(65536);
    expect(parseKernelValue(specOf('hs_ctrl'), '')).toBe('');
    expect(parseKernelValue(undefined, '1\t2')).toBe('1\t2');
  });

  it('splits NAME=VALUE at the first =', () => {
    expect(parseAssignment('wmem=1M')).toEqual(['wmem', '1M']);
    expect(parseAssignment('hs_ctrl=')).toEqual(['hs_ctrl', '']);
    expect(codeOf(() => parseAssignment('wmem'))).toBe('EINVAL');
    expect(codeOf(() => parseAssignment('=1'))).toBe('EINVAL');
  });
});

describe('name safety', () => {
  it('accepts bare names and the net.smc. / net/smc/ spellings', () => {
    expect(normalizeName('wmem')).toBe('wmem');
    expect(normalizeName('net.smc.wmem')).toBe('wmem');
    expect(normalizeName('net/smc/wmem')).toBe('wmem');
  });

  it('refuses anything that could name a path', () => {
    for (const bad of ['', '..', '../wmem', '/etc/passwd', 'wmem/../../x', 'net.smc.', 'WMEM', 'w mem', 'wmem\n', 'net.ipv4.tcp_wmem', '.', 'a.b']) {
      expect(codeOf(() => normalizeName(bad)), JSON.stringify(bad)).toBe('ENOSYSCTL');
    }
  });

  it('only lets through [a-z0-9_] names (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), (s) => {
        let name: string | undefined;
        try {
          name = normalizeName(s);
        } catch (e) {
          expect(e).toBeInstanceOf(SysctlError);
        }
        if (name !== undefined) expect(name).toMatch(/^[a-z0-9_]+$/);
      }),
      { numRuns: fuzzRuns(500) },
    );
  });

  it('refuses names the namespace does not have, listing the valid ones', () => {
    const names = Object.keys(FRESH_612).sort();
    expect(checkName('net.smc.wmem', names)).toBe('wmem');
    expect(() => checkName('nosuch', names)).toThrow('unknown sysctl net.smc.nosuch; valid: autocorking_size, limit_smc_hs, rmem,');
    expect(() => checkName('smcr_max_send_wr', names)).toThrow('net.smc.smcr_max_send_wr is not in this kernel (added in Linux 6.19)');
    // a sysctl smc-run knows that this kernel lacks is the kernel's limit (ENOTSUP, exit 1), not a typo
    expect(codeOf(() => checkName('smcr_max_send_wr', names))).toBe('ENOTSUP');
    expect(() => checkName('hs_ctrl', names)).toThrow('net.smc.hs_ctrl is not in this kernel (added in Linux 6.19, with CONFIG_SMC_HS_CTRL_BPF)');
    expect(codeOf(() => checkName('nosuch', names))).toBe('ENOSYSCTL');
    expect(() => checkName('../../../etc/shadow', names)).toThrow(/not a net.smc sysctl name.*valid: autocorking_size/);
  });
});

describe('list, get and set on a namespace', () => {
  it('lists every discovered sysctl with default and meaning, unknown ones too', () => {
    const { files } = fakeNamespace({ ...FRESH_612, autocorking_size: '0', future_knob: '3' });
    const list = listFrom(files);
    expect(list.map((s) => s.name)).toEqual(files.names);
    expect(list.find((s) => s.name === 'autocorking_size')).toMatchObject({ key: 'net.smc.autocorking_size', value: 0, default: 65536, isDefault: false, since: '5.18' });
    expect(list.find((s) => s.name === 'wmem')).toMatchObject({ value: 65536, isDefault: true, unit: 'bytes' });
    expect(list.find((s) => s.name === 'future_knob')).toMatchObject({ value: '3', default: undefined, isDefault: undefined, meaning: undefined });
  });

  it('reads named ones in any spelling', () => {
    const { files } = fakeNamespace();
    expect(readFrom(files, ['net.smc.rmem', 'limit_smc_hs']).map((s) => [s.key, s.value])).toEqual([['net.smc.rmem', 65536], ['net.smc.limit_smc_hs', 0]]);
  });

  it('writes kernel text and reports old -> new', () => {
    const { files, writes } = fakeNamespace();
    expect(writeTo(files, [['wmem', '1M'], ['net.smc.autocorking_size', 0]])).toEqual([
      { name: 'wmem', key: 'net.smc.wmem', old: 65536, new: 1048576 },
      { name: 'autocorking_size', key: 'net.smc.autocorking_size', old: 65536, new: 0 },
    ]);
    expect(writes).toEqual([['wmem', '1048576'], ['autocorking_size', '0']]);
  });

  it('writes nothing when any one of several assignments is wrong', () => {
    for (const bad of [[['wmem', '1M'], ['nosuch', '1']], [['wmem', '1M'], ['rmem', '1k']], [['wmem', '1M'], ['smcr_buf_type', 'x']]] as [string, string][][]) {
      const { files, writes, state } = fakeNamespace();
      expect(() => writeTo(files, bad)).toThrow(SysctlError);
      expect(writes).toEqual([]);
      expect(state.wmem).toBe('65536');
    }
  });

  describe('a write the kernel refuses after others it took: all or nothing, and a true message', () => {
    const kernelRefuses = (bad: string, err: () => Error): Refusal => (name, _text, how) => {
      if (name === bad && how === 'write') throw err();
    };
    const einval = () => new SysctlError('EINVAL', 'the kernel refused "nosuch" for net.smc.hs_ctrl (EINVAL)', true);
    const thrownBy = (fn: () => unknown): Error & { code?: string } => {
      try {
        fn();
      } catch (e) {
        return e as Error & { code?: string };
      }
      throw new Error('did not throw');
    };

    it('EINVAL on the third: the first two are written back, last first, and the message says so', () => {
      const { files, writes, state } = fakeNamespace({ ...FRESH_612, hs_ctrl: '' }, kernelRefuses('hs_ctrl', einval));
      const e = thrownBy(() => writeTo(files, [['wmem', '1M'], ['autocorking_size', '0'], ['hs_ctrl', 'nosuch']]));
      expect(e).toBeInstanceOf(SysctlError);
      expect(e).toMatchObject({ code: 'EINVAL', fromKernel: true });
      expect(e.message).toBe('the kernel refused "nosuch" for net.smc.hs_ctrl (EINVAL); restored what was set before it (net.smc.autocorking_size = 65536, net.smc.wmem = 65536): the namespace is as it was');
      expect(writes).toEqual([
        ['wmem', '1048576'],
        ['autocorking_size', '0'],
        ['hs_ctrl', 'nosuch', 'refused'],
        ['autocorking_size', '65536', 'restore'],
        ['wmem', '65536', 'restore'],
      ]);
      expect(state).toEqual({ ...FRESH_612, hs_ctrl: '' });
    });

    it('EPERM on the second: the first is restored; the code (and so the exit status) stays EPERM', () => {
      const eperm = () => new SysctlError('EPERM', 'writing net.smc.rmem needs CAP_NET_ADMIN over its network namespace (run as root, e.g. with sudo)');
      const { files, state } = fakeNamespace(FRESH_612, kernelRefuses('rmem', eperm));
      const e = thrownBy(() => writeTo(files, [['wmem', '1M'], ['rmem', '1M']]));
      expect(e).toMatchObject({ code: 'EPERM' });
      expect(e.message).toMatch(/^writing net\.smc\.rmem needs CAP_NET_ADMIN .*; restored what was set before it \(net\.smc\.wmem = 65536\): the namespace is as it was$/);
      expect(state).toEqual(FRESH_612);
    });

    it('a --target that exited before the second write: the first is written back into the namespace held open', () => {
      let alive = true;
      const { files, writes, state } = fakeNamespace(FRESH_612, (_name, _text, how) => {
        // as the procfs layer: write checks the target, restore does not
        if (how === 'write' && !alive) throw new TargetError('ESRCH', 'PID 4321 exited while the command ran');
        alive = false;
      });
      const e = thrownBy(() => writeTo(files, [['wmem', '1M'], ['rmem', '1M']]));
      expect(e).toBeInstanceOf(TargetError);
      expect(e.message).toBe('PID 4321 exited while the command ran; restored what was set before it (net.smc.wmem = 65536): the namespace is as it was');
      expect(writes.at(-1)).toEqual(['wmem', '65536', 'restore']);
      expect(state).toEqual(FRESH_612);
    });

    it('a --target that exited before the first write: nothing written, and the message says so', () => {
      const { files, writes } = fakeNamespace(FRESH_612, () => {
        throw new TargetError('ESRCH', 'PID 4321 exited while the command ran');
      });
      const e = thrownBy(() => writeTo(files, [['wmem', '1M'], ['rmem', '1M']]));
      expect(e.message).toBe('PID 4321 exited while the command ran (its network namespace was left unchanged)');
      expect(writes).toEqual([['wmem', '1048576', 'refused']]);
    });

    it('a single refused value keeps its message as it was', () => {
      const { files } = fakeNamespace({ ...FRESH_612, hs_ctrl: '' }, kernelRefuses('hs_ctrl', einval));
      expect(thrownBy(() => writeTo(files, [['hs_ctrl', 'nosuch']])).message).toBe('the kernel refused "nosuch" for net.smc.hs_ctrl (EINVAL)');
    });

    it('a restore that fails too: says exactly which value stayed, and what it is now', () => {
      const { files, state } = fakeNamespace(FRESH_612, (name, _text, how) => {
        if (name === 'rmem' && how === 'write') throw new SysctlError('EINVAL', 'the kernel refused "1048576" for net.smc.rmem (EINVAL)', true);
        if (name === 'wmem' && how === 'restore') throw Object.assign(new Error('write EIO'), { code: 'EIO' });
      });
      const e = thrownBy(() => writeTo(files, [['wmem', '1M'], ['autocorking_size', '0'], ['rmem', '1M']]));
      expect(e.message).toBe(
        'the kernel refused "1048576" for net.smc.rmem (EINVAL); could not restore net.smc.wmem (it is 1048576, was 65536: EIO); restored net.smc.autocorking_size = 65536',
      );
      expect(state).toEqual({ ...FRESH_612, wmem: '1048576' });
    });

    it('a write that went through but could not be read back is restored too', () => {
      const { files, state } = fakeNamespace();
      const read = files.read;
      let reads = 0;
      files.read = (name) => {
        // the read of the old values, the read-back of wmem, then the read-back of rmem fails
        if (name === 'rmem' && ++reads === 2) throw Object.assign(new Error('read EIO'), { code: 'EIO' });
        return read(name);
      };
      const e = thrownBy(() => writeTo(files, [['wmem', '1M'], ['rmem', '1M']]));
      expect(e.message).toBe('read EIO; restored what was set before it (net.smc.rmem = 65536, net.smc.wmem = 65536): the namespace is as it was');
      expect(state).toEqual(FRESH_612);
    });
  });

  it('validates export pairs by the schema alone, so no SMC is needed to write a pod spec', () => {
    expect(validateForExport([['smcr_max_send_wr', '64'], ['wmem', '1M']])).toEqual([
      { name: 'smcr_max_send_wr', key: 'net.smc.smcr_max_send_wr', text: '64' },
      { name: 'wmem', key: 'net.smc.wmem', text: '1048576' },
    ]);
    expect(codeOf(() => validateForExport([['rmem', '8k']]))).toBe('ERANGE');
  });
});
