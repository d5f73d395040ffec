// UEID validation as the kernel does it, and the generic netlink message that carries one.
import { describe, expect, it } from 'vitest';
import { normalizeUeid, UeidError } from '../../src/ueid';
import { buildGenl, parseGenl } from '../../src/netlink/genl';
import { buildStringAttr, parseMessages, buildMessage, NLM_F_ACK, NLM_F_REQUEST } from '../../src/netlink/message';

describe('UEID validation', () => {
  it('upper-cases and pads to the 32 characters the kernel stores', () => {
    expect(normalizeUeid('smc-run.test-1')).toBe('SMC-RUN.TEST-1'.padEnd(32, ' '));
    expect(normalizeUeid('A'.repeat(32))).toBe('A'.repeat(32));
  });
  it('refuses what the kernel would refuse, with the rule', () => {
    for (const bad of ['', '   ', 'A'.repeat(33), '-LEADING', '.DOT', 'HAS SPACE', 'UNDER_SCORE', 'ÄÖ', 'a/b']) {
      expect(() => normalizeUeid(bad), JSON.stringify(bad)).toThrow(UeidError);
    }
    expect(() => normalizeUeid('x y')).toThrow(/letters, digits, "\." and "-"/);
    expect(() => normalizeUeid('A'.repeat(40))).toThrow(/at most 32/);
  });
  it('builds ADD_UEID as one genl message with a 33-byte string attribute', () => {
    const id = normalizeUeid('smc-run-test');
    const msg = buildMessage(0x1d, NLM_F_REQUEST | NLM_F_ACK, 7, buildGenl(10, 1, buildStringAttr(1, id)));
    const [m] = parseMessages(msg);
    expect(m).toMatchObject({ type: 0x1d, flags: NLM_F_REQUEST | NLM_F_ACK, seq: 7 });
    const g = parseGenl(m!.payload);
    expect(g.cmd).toBe(10);
    const raw = g.attrs.map.get(1)!;
    expect(raw.length).toBe(33); // 32 characters and the NUL the kernel checks for
    expect(g.attrs.str(1)).toBe(id);
  });
});
