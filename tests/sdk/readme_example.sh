#!/bin/sh
# The plugin quick start in README.md must stay true: extract its C file and
# profile, build the plugin against the SDK headers, and check that
# `ksched validate` enables it at Filter and Score and that `ksched
# schedule` runs with it on the example cluster.
# Usage: readme_example.sh SOURCE_ROOT KSCHED PLUGIN_DIR
set -eu
src="$1"; ksched="$2"; plugins="$3"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$src/README.md" "$tmp" <<'PY'
import sys
text = open(sys.argv[1]).read()
start = text.index("```c\n#include <ksched/plugin.h>")
end = text.index("```", start + 4)
open(sys.argv[2] + "/fewpods.c", "w").write(text[start + 5:end])
marker = "```yaml\napiVersion: kubescheduler.config.k8s.io/v1\n"
i = text.index(marker, text.index("Enable it in a profile"))
j = text.index("```", i + 4)
open(sys.argv[2] + "/my.yaml", "w").write(text[i + 8:j])
PY
${CC:-cc} -shared -fPIC -fvisibility=hidden -Wall -Werror -I"$src/sdk/include" \
    "$tmp/fewpods.c" -o "$tmp/fewpods.so"
out=$("$ksched" validate --config "$tmp/my.yaml" --no-default-plugin-path \
      --plugin-dir "$plugins" --plugin-dir "$tmp")
echo "$out"
echo "$out" | grep -q '^  Filter .*FewPods' || { echo "FAIL: FewPods not at Filter" >&2; exit 1; }
echo "$out" | grep -q 'FewPods (weight 2)' || { echo "FAIL: FewPods not at Score with weight 2" >&2; exit 1; }
rc=0
"$ksched" schedule --config "$tmp/my.yaml" --no-default-plugin-path \
    --plugin-dir "$plugins" --plugin-dir "$tmp" \
    --cluster "$src/profiles/examples/cluster.yaml" --deterministic > "$tmp/out" || rc=$?
cat "$tmp/out"
[ "$rc" = 3 ] || { echo "FAIL: schedule exit status $rc, expected 3 (huge-0 never fits)" >&2; exit 1; }
grep -q '^8 bound, 1 could not be placed' "$tmp/out" || { echo "FAIL: unexpected summary" >&2; exit 1; }
echo "README plugin example: ok"
