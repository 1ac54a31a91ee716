#!/bin/sh
# The plugin quick start in README.md must stay true: extract its C file and
# profile, build the plugin against the SDK headers, check that `ksched
# validate` enables it at Filter and Score, that `ksched schedule` runs with
# it on the example cluster, and that it changes decisions:
#  - Filter: on a cluster where the roomiest node already runs 10 pods, the
#    default profile places a new pod there, the README profile elsewhere;
#  - Score: with 9 pods there, the node passes FewPods' Filter but its
#    Score (91 against 100, weight 2) moves the pod to the other node.
# Usage: readme_example.sh SOURCE_ROOT KSCHED PLUGIN_DIR
set -eu
src="$1"; ksched="$2"; plugins="$3"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
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
# The cluster-objects example (ABI 1.3) builds, and loads.
python3 - "$src/README.md" "$tmp" <<'PY'
import sys
text = open(sys.argv[1]).read()
start = text.index("```c\n/* teamgate.c")
end = text.index("```", start + 4)
open(sys.argv[2] + "/teamgate.c", "w").write(text[start + 5:end])
PY
${CC:-cc} -shared -fPIC -fvisibility=hidden -Wall -Wextra -Werror \
    -I"$src/sdk/include" "$tmp/teamgate.c" -o "$tmp/teamgate.so"
"$ksched" plugins --no-default-plugin-path --plugin-dir "$tmp" |
    grep -q TeamGate || fail "the README's TeamGate example does not load"
out=$("$ksched" validate --config "$tmp/my.yaml" --no-default-plugin-path \
      --plugin-dir "$plugins" --plugin-dir "$tmp")
echo "$out"
echo "$out" | grep -q '^  Filter .*FewPods' || fail "FewPods not at Filter"
echo "$out" | grep -q 'FewPods (weight 2)' || fail "FewPods not at Score with weight 2"
rc=0
"$ksched" schedule --config "$tmp/my.yaml" --no-default-plugin-path \
    --plugin-dir "$plugins" --plugin-dir "$tmp" \
    --cluster "$src/profiles/examples/cluster.yaml" --deterministic > "$tmp/out" || rc=$?
cat "$tmp/out"
[ "$rc" = 3 ] || fail "schedule exit status $rc, expected 3 (huge-0 never fits)"
grep -q '^8 bound, 1 could not be placed' "$tmp/out" || fail "unexpected summary"

# cluster N: node a-busy (64 CPUs, N running pods) and b-idle (4 CPUs, none),
# one pending pod new-0. Without FewPods a-busy wins on free resources.
cluster() {
    cat <<YAML
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: a-busy}
  status:
    allocatable: {cpu: "64", memory: 256Gi, pods: "110"}
- apiVersion: v1
  kind: Node
  metadata: {name: b-idle}
  status:
    allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
- apiVersion: v1
  kind: Pod
  metadata: {name: new-0, namespace: default}
  spec:
    containers: [{name: c, image: pause, resources: {requests: {cpu: 100m}}}]
YAML
    i=0
    while [ "$i" -lt "$1" ]; do
        cat <<YAML
- apiVersion: v1
  kind: Pod
  metadata: {name: run-$i, namespace: default}
  spec:
    nodeName: a-busy
    containers: [{name: c, image: pause, resources: {requests: {cpu: 10m}}}]
YAML
        i=$((i + 1))
    done
}
# place CLUSTER [ARGS...]: schedule new-0, print the node it is bound to.
place() {
    c="$1"; shift
    prc=0
    "$ksched" schedule --no-default-plugin-path --plugin-dir "$plugins" \
        --cluster "$c" --deterministic -o table "$@" > "$tmp/place.out" || prc=$?
    [ "$prc" = 0 ] || { cat "$tmp/place.out" >&2; fail "schedule $c $* exited $prc"; }
    grep -q '^1 bound, 0 could not be placed' "$tmp/place.out" ||
        { cat "$tmp/place.out" >&2; fail "schedule $c $*: new-0 not bound"; }
    awk '$1 == "default/new-0" { print $2 }' "$tmp/place.out"
}
with_plugin="--config $tmp/my.yaml --plugin-dir $tmp"
for n in 10 9; do
    cluster "$n" > "$tmp/c$n.yaml"
    without=$(place "$tmp/c$n.yaml")
    # shellcheck disable=SC2086
    with=$(place "$tmp/c$n.yaml" $with_plugin)
    echo "a-busy running $n pods: default profile -> $without, README profile -> $with"
    [ "$without" = a-busy ] || fail "$n pods: without FewPods new-0 went to '$without', expected a-busy"
    [ "$with" = b-idle ] || fail "$n pods: with FewPods new-0 went to '$with', expected b-idle"
done

# The reasons: at 10 pods FewPods' Filter rejects a-busy with its message;
# at 9 it passes and FewPods scores a-busy 2 x 91, b-idle 2 x 100.
# shellcheck disable=SC2086
place "$tmp/c10.yaml" $with_plugin --explain default/new-0 > /dev/null
cat "$tmp/place.out"
grep -q '^  a-busy .*node(s) already run 10 pods' "$tmp/place.out" ||
    fail "explain does not show FewPods' Filter reason for a-busy"
# shellcheck disable=SC2086
place "$tmp/c9.yaml" $with_plugin --explain default/new-0 > /dev/null
cat "$tmp/place.out"
grep -q '^  a-busy .*passes filters.*FewPods 182' "$tmp/place.out" ||
    fail "explain does not show FewPods scoring a-busy 182"
grep -q '^  b-idle .*passes filters.*FewPods 200' "$tmp/place.out" ||
    fail "explain does not show FewPods scoring b-idle 200"
echo "README plugin example: ok"
