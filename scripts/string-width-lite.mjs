// What the CLI bundle (scripts/bundle-cli.js) gives yargs and cliui for `string-width`. The real module
// creates an Intl.Segmenter when it is loaded (ICU data: about 17 ms per copy on the host, and yargs and
// cliui bring two versions), so every CLI start paid for it, help or not. Printable ASCII is one column a
// character; any other text goes to the real string-width, loaded (with its Segmenter) on first need.
import stripAnsi from 'strip-ansi';

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
let real;

export default function stringWidth(text, options = {}) {
  if (typeof text !== 'string' || text.length === 0) return 0;
  const plain = options.countAnsiEscapeCodes ? text : stripAnsi(text);
  if (PRINTABLE_ASCII.test(plain)) return plain.length;
  // a require of an ES module inside the bundle: esbuild initialises it here, on the first call
  real ??= require('../node_modules/string-width/index.js').default;
  return real(text, options);
}
