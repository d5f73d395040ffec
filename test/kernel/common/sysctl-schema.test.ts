// The sysctl schema (src/sysctl/schema.ts) against the running kernel's /proc/sys/net/smc, in every lane
// that includes this file: it fails when the kernel has a knob the schema does not know, when the schema
// says a kernel of this version has a knob (without a kernel option) that it does not have, or when a
// knob shows up earlier than the schema's `since` (a wrong version in the schema, or a backport to note).
// Knobs that need a kernel option (hs_ctrl: CONFIG_SMC_HS_CTRL_BPF) may be absent without failing.
import * as fs from 'node:fs';
import * as os from 'node:os';
import { describe, expect, it } from 'vitest';
import { compareWithSchema, specOf } from '../../../src/sysctl/schema';

const DIR = '/proc/sys/net/smc';

describe(`sysctl schema against this kernel (${os.release()})`, () => {
  it('the net.smc listing and the schema agree', () => {
    // the SMC module is loaded in every guest; a missing directory is a broken lane, not a skip
    const names = fs.readdirSync(DIR).sort();
    const values = Object.fromEntries(names.map((n) => [n, fs.readFileSync(`${DIR}/${n}`, 'utf8').trim()]));
    console.log(`net.smc on ${os.release()}: ${JSON.stringify(values)}`);
    const cmp = compareWithSchema(os.release(), names);
    if (cmp.optionalAbsent.length) console.log(`absent, need a kernel option: ${cmp.optionalAbsent.map((n) => `${n} (${specOf(n)?.requires})`).join(', ')}`);
    expect(cmp.unknown, 'knobs of this kernel the schema lacks').toEqual([]);
    expect(cmp.missing, 'knobs the schema claims for this kernel version that it lacks').toEqual([]);
    expect(cmp.early, 'knobs present before the schema says they came').toEqual([]);
  });

  it('every knob of this kernel has the type the schema gives it', () => {
    for (const name of fs.readdirSync(DIR)) {
      const spec = specOf(name);
      const text = fs.readFileSync(`${DIR}/${name}`, 'utf8').replace(/\n$/, '');
      if (spec?.type === 'string') expect(text.length, name).toBeLessThanOrEqual(spec.maxLength ?? 0);
      else expect(text, name).toMatch(/^-?\d+$/);
    }
  });
});
