import { describe, expect, it } from 'vitest';
import { quoteNodeOption, splitNodeOptions, withPreload } from '../../src/launcher/node-options';

describe('NODE_OPTIONS', () => {
  it('quotes paths with spaces, quotes and backslashes so node reads them back', () => {
    for (const p of ['/a/b.js', '/with space/x.js', '/q"uote/x.js', '/back\\slash/x.js', '/both \\" x/y.js']) {
      expect(splitNodeOptions(`--require ${quoteNodeOption(p)}`)).toEqual(['--require', p]);
    }
  });

  it('keeps the user options first and adds the preload once', () => {
    const once = withPreload('--max-old-space-size=64 --enable-source-maps', '/x y/preload.js');
    expect(splitNodeOptions(once)).toEqual(['--max-old-space-size=64', '--enable-source-maps', '--require', '/x y/preload.js']);
    expect(withPreload(once, '/x y/preload.js')).toBe(once);
    expect(withPreload(undefined, '/p.js')).toBe('--require "/p.js"');
    expect(withPreload('   ', '/p.js')).toBe('--require "/p.js"');
  });

  it('splits like node: quoted groups, escapes only inside quotes', () => {
    expect(splitNodeOptions('-r "a b"  --x')).toEqual(['-r', 'a b', '--x']);
    expect(splitNodeOptions('--title=""')).toEqual(['--title=']);
  });
});
