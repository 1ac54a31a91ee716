#!/bin/sh
# cel-differential: compares ksched's CEL subset with @bufbuild/cel on
# random expressions (cel_differential.mjs). Installs the pinned package
# under the build folder on first use; skips (77) without node, npm or a
# reachable registry.
#   run_differential.sh CLI NPM_PREFIX SCRIPT [COUNT] [SEED]
cli=$1 prefix=$2 script=$3 count=${4:-5000} seed=${5:-20261127}
version=0.6.1
protobuf=2.17.0 # its peer dependency, pinned too

if ! command -v node >/dev/null 2>&1; then
    echo "node is not installed: skipped (Debian: apt-get install nodejs npm)"
    exit 77
fi
if [ ! -f "$prefix/node_modules/@bufbuild/cel/package.json" ]; then
    if ! command -v npm >/dev/null 2>&1; then
        echo "npm is not installed and @bufbuild/cel is not under $prefix: skipped"
        exit 77
    fi
    mkdir -p "$prefix"
    if ! npm install --no-audit --no-fund --prefix "$prefix" "@bufbuild/cel@$version" \
            "@bufbuild/protobuf@$protobuf" \
            >"$prefix/npm-install.log" 2>&1; then
        echo "npm install @bufbuild/cel@$version failed (see $prefix/npm-install.log): skipped"
        tail -5 "$prefix/npm-install.log"
        exit 77
    fi
fi
exec node "$script" "$cli" "$prefix" "$count" "$seed"
