// The CLI bundle's stand-in for string-width (scripts/string-width-lite.mjs) measures text as the real
// module does: printable ASCII itself, everything else through the real string-width, loaded lazily.
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(__dirname, '../..');

/** the stand-in as the CLI bundle has it (esbuild turns its require of the real module into a lazy init) */
async function bundledLite(): Promise<(text: unknown, options?: object) => number> {
  const out = await esbuild.build({
    entryPoints: [path.join(ROOT, 'scripts', 'string-width-lite.mjs')], bundle: true, platform: 'node', format: 'cjs', write: false, logLevel: 'silent',
  });
  const mod = { exports: {} as { default: (text: unknown, options?: object) => number } };
  new Function('module', 'exports', 'require', out.outputFiles[0]!.text)(mod, mod.exports, require);
  return mod.exports.default;
}

describe('string-width stand-in of the CLI bundle', () => {
  it('gives the widths the real string-width gives', async () => {
    const lite = await bundledLite();
    const real = ((await import('string-width')) as { default: (text: unknown, options?: object) => number }).default;
    const samples = ['', 'smc-run stats sockets', '  --json  print JSON', '\u001b[31mred\u001b[39m', 'tab\there', 'line\nbreak',
      '日本語のヘルプ', 'naïve café', '👍🏽 ok', 'a\u0301', '\u200b', 'x'.repeat(200)];
    for (const s of samples) {
      expect(lite(s), JSON.stringify(s)).toBe(real(s));
      expect(lite(s, { countAnsiEscapeCodes: true }), JSON.stringify(s)).toBe(real(s, { countAnsiEscapeCodes: true }));
    }
    expect(lite(42)).toBe(0);
  });
});
