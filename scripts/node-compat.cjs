'use strict';
// Preloaded (node --require) by scripts/test-arch.sh when the foreign-arch Node is older than the repo's
// engines (the npm registry's newest Node for s390x is 20.11.0; the repo needs >= 20.19). It adds only
// what the test tooling (vitest 4 / rolldown) needs from newer Node 20 releases, never product code:
//   util.styleText, util.parseEnv (Node 20.12)
const util = require('node:util');
const { syncBuiltinESMExports } = require('node:module');

if (typeof util.styleText !== 'function') {
  util.styleText = function styleText(format, text) {
    const formats = Array.isArray(format) ? format : [format];
    let left = '';
    let right = '';
    for (const f of formats) {
      const codes = util.inspect.colors[f];
      if (!codes) throw new TypeError(`The argument 'format' must be one of: ${Object.keys(util.inspect.colors).join(', ')}. Received ${f}`);
      left += `\u001b[${codes[0]}m`;
      right = `\u001b[${codes[1]}m` + right;
    }
    return `${left}${text}${right}`;
  };
}
if (typeof util.parseEnv !== 'function') {
  // dotenv syntax as Node's: KEY=value, optional `export `, quotes, # comments
  util.parseEnv = function parseEnv(content) {
    const out = {};
    for (const raw of String(content).split(/\r?\n/)) {
      const m = /^\s*(?:export\s+)?([\w.-]+)\s*=\s*(.*)?\s*$/.exec(raw);
      if (!m) continue;
      let v = (m[2] ?? '').trim();
      const q = v[0];
      if ((q === '"' || q === "'" || q === '`') && v.lastIndexOf(q) > 0) {
        v = v.slice(1, v.lastIndexOf(q));
        if (q === '"') v = v.replace(/\\n/g, '\n');
      } else {
        v = v.replace(/\s+#.*$/, '').trim();
      }
      out[m[1]] = v;
    }
    return out;
  };
}
syncBuiltinESMExports();
// ESM imports of node:util see only the export names the builtin had when first loaded: redirect them
{
  require('node:module').register('./node-compat-hooks.mjs', require('node:url').pathToFileURL(__filename));
}
