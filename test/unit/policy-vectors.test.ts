// The rule grammar's shared vectors (test/fixtures/policy/vectors.json) through the Node parser and
// matcher, and through the BPF policy encoder: every rule read back as the kernel holds it decides every
// vector as the rule it came from. The LD_PRELOAD library runs the same table in
// test/integration/preload-idioms.test.ts.
import { describe, expect, it } from 'vitest';
import { decodePolicy, encodePolicy, kernelRuleText } from '../../src/bpf/policy';
import { connectTarget, parseRule, parseRules, wantsSmc } from '../../src/policy/rules';
import { BYTE_ORDERS } from '../helpers/byte-orders';
import { label, VECTORS } from '../helpers/policy-vectors';

const decide = (include: string, exclude: string, address: string, port: number, listener: boolean): boolean =>
  wantsSmc(parseRules(include), parseRules(exclude), listener ? address : connectTarget(address), port);

describe('the rule grammar, one table for every implementation', () => {
  it(`Node: ${VECTORS.decisions.length} decisions`, () => {
    for (const d of VECTORS.decisions) expect(decide(d.include, d.exclude, d.address, d.port, d.listener), label(d)).toBe(d.smc);
  });

  it(`Node: ${VECTORS.invalid.length} malformed rules refused`, () => {
    for (const text of VECTORS.invalid) expect(() => parseRule(text), text).toThrow(RangeError);
  });

  for (const order of BYTE_ORDERS) {
    it(`BPF encoder (${order}): the rules as the kernel holds them decide every connect vector the same`, () => {
      for (const d of VECTORS.decisions.filter((v) => !v.listener)) {
        const held = decodePolicy(encodePolicy(parseRules(d.include), parseRules(d.exclude), order), order);
        const back = (rules: typeof held.include): string => rules.map(kernelRuleText).join(',');
        expect(decide(back(held.include), back(held.exclude), d.address, d.port, false), label(d)).toBe(d.smc);
      }
    });
  }
});
