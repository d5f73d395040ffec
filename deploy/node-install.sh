#!/bin/sh
# deploy/node-install.sh: what the node kit's init container runs (deploy/kubernetes/smc-run-node.yaml), and
# what an administrator can run on a node by hand. It puts a copy of this smc-run package and of the node
# that runs it under PREFIX on the host (the container runtime runs the hook there, outside any container)
# and writes the hooks.d file that points at that copy.
#   HOST_ROOT  where the host's root is mounted here ("" when run on the host itself; the kit: /host)
#   PREFIX     the copy's place as the host sees it (default /opt/smc-run)
#   HOOKS_DIR  hooks.d as the host sees it (default /etc/containers/oci/hooks.d: podman and CRI-O read it)
# The node binary is copied as it is: the host needs the C library it was linked against (glibc 2.28+ for
# the official builds).
set -eu
HOST_ROOT=${HOST_ROOT:-}
PREFIX=${PREFIX:-/opt/smc-run}
HOOKS_DIR=${HOOKS_DIR:-/etc/containers/oci/hooks.d}
pkg=$(cd "$(dirname "$0")/.." && pwd)
node=$(command -v node) || { echo "node-install: no node in PATH" >&2; exit 1; }
dest=$HOST_ROOT$PREFIX
mkdir -p "$dest.new/bin"
cp "$node" "$dest.new/bin/node"
cp -a "$pkg" "$dest.new/lib"
# replace the copy of a previous version whole (a hook running from it meanwhile keeps its open files)
rm -rf "$dest.old"
[ ! -e "$dest" ] || mv "$dest" "$dest.old"
mv "$dest.new" "$dest"
rm -rf "$dest.old"
"$dest/bin/node" "$dest/lib/bin/smc-run" oci-hook install --dir "$HOST_ROOT$HOOKS_DIR" --launcher "$PREFIX/lib/bin/smc-run" --node-dir "$PREFIX/bin"
