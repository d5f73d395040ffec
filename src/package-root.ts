// The installed package's root directory. Every file that runs it sits directly in dist/: tsc's
// dist/package-root.js and the esbuild bundles (dist/preload.js, dist/preload-runtime.js, dist/cli.mjs), so
// dist/.. is the root wherever this module ends up. Paths into the package are built from here, never from
// a module's own __dirname (a bundle moves modules out of their tsc directory).
import * as path from 'node:path';

export const PACKAGE_ROOT = path.join(__dirname, '..');
