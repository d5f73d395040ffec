#!/usr/bin/env bash
# The host integration suite under Node 22: the hook relies on Node internals (the TCP handle class and
# its methods) that may change between majors. Node 22 comes from the npm registry's `node` package.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${XDG_CACHE_HOME:-$HOME/.cache}/smc-run/node22
if [ ! -x "$dir/node_modules/.bin/node" ]; then
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error node@22 >/dev/null
fi
export PATH="$dir/node_modules/.bin:$PATH"
echo "node $(node --version)"
node node_modules/vitest/vitest.mjs run --config vitest.config.mts test/integration --exclude 'test/integration/packaging.test.ts'
