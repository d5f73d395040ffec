import { describe, expect, it } from 'vitest';
import { DumpPacer } from '../../src/api/dump-pacing';

describe('DumpPacer', () => {
  it('lets the first dump start at once', () => {
    expect(new DumpPacer(1).delay(0)).toBe(0);
    expect(new DumpPacer(1).delay(123456)).toBe(0);
  });

  it('after a dump of T ms, makes the next one wait until T ms after it ended', () => {
    const p = new DumpPacer(1);
    p.record(100, 130); // a 30 ms dump
    expect(p.delay(130)).toBe(30);
    expect(p.delay(145)).toBe(15);
    expect(p.delay(160)).toBe(0);
    expect(p.delay(500)).toBe(0); // a quiet spell: no pause
  });

  it('scales the pause with the factor, and factor 0 never waits', () => {
    const twice = new DumpPacer(2);
    twice.record(0, 10);
    expect(twice.delay(10)).toBe(20);
    const none = new DumpPacer(0);
    none.record(0, 10);
    expect(none.delay(10)).toBe(0);
  });

  it('follows the latest dump only', () => {
    const p = new DumpPacer(1);
    p.record(0, 50);
    p.record(100, 102);
    expect(p.delay(102)).toBe(2);
    p.record(200, 190); // a clock that went backwards counts as a 0 ms dump
    expect(p.delay(190)).toBe(0);
  });
});
