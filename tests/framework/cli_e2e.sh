#!/bin/sh
# End-to-end checks of the ksched binary: validate, plugins, schedule, and
# the plugin search path of a ksched run from the build tree or installed.
# Usage: cli_e2e.sh KSCHED SOURCE_ROOT PLUGIN_DIR FIXTURE_DIR DATA_DIR
set -u

KSCHED=$1
SRC=$2
PLUG=$3
FIX=$4
DATA=$5
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ksched-cli-XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
OUT=$TMP/out
ERR=$TMP/err
failures=0

fail() {
    echo "FAIL: $*"
    echo "--- stdout"; cat "$OUT"
    echo "--- stderr"; cat "$ERR"
    failures=$((failures + 1))
}

# run EXPECTED_STATUS ARGS... : run ksched, check its exit status.
run() {
    want=$1
    shift
    "$KSCHED" "$@" >"$OUT" 2>"$ERR"
    got=$?
    if [ "$got" -ne "$want" ]; then
        fail "ksched $* exited $got, expected $want"
        return 1
    fi
    return 0
}

# has FILE TEXT : FILE contains the fixed string TEXT.
has() {
    grep -qF -- "$2" "$1" || fail "\"$2\" not in $(basename "$1") of the last run"
}

# usage_error MESSAGE COMMAND ARGS... : `ksched COMMAND ARGS...` exits 2
# with "ksched COMMAND: MESSAGE" and the hint to its --help on stderr, and
# prints nothing on stdout.
usage_error() {
    msg=$1
    shift
    if run 2 "$@"; then
        has "$ERR" "ksched $1: $msg"
        has "$ERR" "Try 'ksched $1 --help'."
        [ -s "$OUT" ] && fail "ksched $* printed on stdout"
    fi
}

# --- validate ---------------------------------------------------------------

if run 0 validate --plugin-dir "$PLUG" --no-default-plugin-path; then
    has "$OUT" "configuration <default> is valid: 1 profile(s)"
    grep '^  Score ' "$OUT" >"$TMP/score" || fail "no Score line"
    has "$TMP/score" "TaintToleration (weight 3), NodeAffinity (weight 2), NodeResourcesFit (weight 1), VolumeBinding (weight 1), PodTopologySpread (weight 2), InterPodAffinity (weight 2), DynamicResources (weight 1), NodeResourcesBalancedAllocation (weight 1), ImageLocality (weight 1)"
    grep '^  QueueSort ' "$OUT" | grep -qx '  QueueSort   PrioritySort' ||
        fail "QueueSort line is not PrioritySort alone"
    grep '^  Reserve ' "$OUT" |
        grep -qx '  Reserve     VolumeBinding, DynamicResources' ||
        fail "Reserve is not VolumeBinding, DynamicResources"
    grep '^  PreBind ' "$OUT" |
        grep -qx '  PreBind     VolumeBinding, DynamicResources' ||
        fail "PreBind is not VolumeBinding, DynamicResources"
fi

# A YAML problem: the file, line and column of the bad value.
if run 1 validate --config "$DATA/bad-yaml.yaml" --plugin-dir "$PLUG"; then
    has "$ERR" "bad-yaml.yaml:3:27: percentageOfNodesToScore: expected an integer"
    has "$ERR" "is not valid"
fi

# A profile problem: the position of the plugin entry.
if run 1 validate --config "$DATA/bad-plugin.yaml" --plugin-dir "$PLUG" \
        --no-default-plugin-path; then
    has "$ERR" "bad-plugin.yaml:8:9: profile \"default-scheduler\": plugin \"NoSuchPlugin\" (enabled at Filter) was not found"
fi

if run 1 validate --config "$DATA/noscore.yaml" --plugin-dir "$FIX/plugins" \
        --plugin-dir "$PLUG" --no-default-plugin-path; then
    has "$ERR" "plugin \"NoScore\" (noscore.so) is enabled at Score but does not implement score"
fi

# Every broken plugin file in the path is reported, each by name.
if run 1 validate --plugin-dir "$FIX/bad" --no-default-plugin-path; then
    has "$ERR" "abimajor.so: plugin was built for ABI 2.0"
    has "$ERR" "abiminor.so: plugin needs ABI 1.9"
    has "$ERR" "notelf.so: cannot load shared object"
    has "$ERR" "short.so: plugin descriptor is"
    has "$ERR" "nodesc.so: not a ksched plugin"
    has "$ERR" "badmagic.so: not a ksched plugin"
    has "$ERR" "noname.so: plugin has no name"
fi

if run 1 validate --plugin-dir "$FIX/dup" --no-default-plugin-path; then
    has "$ERR" "plugin \"Dup\" is defined twice"
fi

usage_error "unknown or incomplete option '--no-such-option'" \
    validate --no-such-option
usage_error "unexpected argument 'extra'" validate extra

# --- plugins -----------------------------------------------------------------

if run 0 plugins --plugin-dir "$FIX/plugins" --no-default-plugin-path; then
    grep -q '^Probe1 .*PreFilter,Filter,PostFilter,PreScore,Score,Reserve,Permit,PreBind,Bind,PostBind' "$OUT" ||
        fail "Probe1's extension points are not listed"
    grep -q '^FifoSort .* QueueSort ' "$OUT" || fail "FifoSort is not listed"
fi

# --- schedule ----------------------------------------------------------------

if run 0 schedule --cluster "$DATA/cluster.yaml" --plugin-dir "$PLUG" \
        --no-default-plugin-path --deterministic; then
    grep -Eq '^default/web +node-big$' "$OUT" || fail "web not on node-big"
    grep -Eq '^default/tiny +node-small$' "$OUT" || fail "tiny not on node-small"
    grep -Eq '^default/trainer +node-gpu$' "$OUT" || fail "trainer not on node-gpu"
    has "$OUT" "3 bound, 0 could not be placed"
fi

if run 3 schedule --cluster "$DATA/cluster.yaml" --cluster "$DATA/huge.yaml" \
        --plugin-dir "$PLUG" --no-default-plugin-path --deterministic \
        -o yaml; then
    has "$OUT" "- pod: default/web"
    has "$OUT" "- pod: default/huge"
    has "$OUT" "message: \"0/3 nodes are available: 1 node(s) had untolerated taint {gpu: true}, 2 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.\""
fi

# Out-of-tree plugins next to the real ones: a Bind chain whose first
# plugin skips, and a heavy Score for node-small.
if run 0 schedule --cluster "$DATA/cluster.yaml" --cluster "$DATA/anywhere.yaml" \
        --config "$DATA/probes.yaml" --plugin-dir "$FIX/plugins" \
        --plugin-dir "$PLUG" --no-default-plugin-path --deterministic; then
    grep -Eq '^default/free +node-small$' "$OUT" || fail "free not on node-small"
    has "$OUT" "4 bound, 0 could not be placed"
fi

# The shipped example cluster: huge-0 never fits (exit 3), the 8 other
# pending pods are bound.
EX="$SRC/profiles/examples/cluster.yaml"
if run 3 schedule --cluster "$EX" --plugin-dir "$PLUG" \
        --no-default-plugin-path --deterministic; then
    has "$OUT" "8 bound, 1 could not be placed"
    has "$OUT" "default/huge-0"
    has "$OUT" "0/6 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint {nvidia.com/gpu: present}, 1 node(s) were unschedulable, 4 Insufficient cpu. no new claims to deallocate, preemption: 0/6 nodes are available: 2 Preemption is not helpful for scheduling, 4 No preemption victims found for incoming pod."
    has "$OUT" "default/trainer-0                        node-c1"
    cp "$OUT" "$TMP/plain"
fi

# --explain: every node's verdict and every plugin's weighted score for one
# pod, and the same bindings as without it.
if run 3 schedule --cluster "$EX" --plugin-dir "$PLUG" \
        --no-default-plugin-path --deterministic --explain default/db-1; then
    has "$OUT" 'explain default/db-1 (attempt 1, profile "default-scheduler")'
    has "$OUT" "rejected by InterPodAffinity: node(s) didn't match pod anti-affinity rules"
    has "$OUT" "rejected by NodeUnschedulable: node(s) were unschedulable"
    grep -Eq '^  node-a1 +passes filters; score [0-9]+ = TaintToleration 300 \+ NodeAffinity skipped \+ NodeResourcesFit [0-9]+ \+' "$OUT" ||
        fail "no weighted score breakdown for node-a1"
    has "$OUT" "  selected: node-"
    grep -v -e '^explain ' -e '^  ' "$OUT" >"$TMP/explained"
    cmp -s "$TMP/plain" "$TMP/explained" ||
        fail "--explain changed the bindings: $(diff "$TMP/plain" "$TMP/explained")"
fi
# Usage errors: exit status 2, the problem and the hint to --help.
usage_error "--explain takes NAMESPACE/POD, got 'nopod'" \
    schedule --cluster "$EX" --plugin-dir "$PLUG" --explain nopod
usage_error "--cluster FILE is required" schedule --plugin-dir "$PLUG"
usage_error "unexpected argument 'extra'" plugins extra

# --- plugin search path: the build tree --------------------------------------
# KSCHED is the build tree's ksched, PLUG the build's plugins folder: run from
# there, it finds the built plugins without --plugin-dir. A copy elsewhere
# (as installed) never looks there.

# run_bin BIN EXPECTED_STATUS ARGS... : run BIN without KSCHED_PLUGIN_PATH.
run_bin() {
    bin=$1
    want=$2
    shift 2
    env -u KSCHED_PLUGIN_PATH "$bin" "$@" >"$OUT" 2>"$ERR"
    got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$bin $* exited $got, expected $want"
        return 1
    fi
    return 0
}

if run_bin "$KSCHED" 0 plugins; then
    has "$OUT" "  build tree: $PLUG"
    grep -q "^DefaultBinder .*  $PLUG/" "$OUT" ||
        fail "DefaultBinder is not loaded from the build tree"
fi
if run_bin "$KSCHED" 3 schedule --cluster "$EX" --deterministic; then
    has "$OUT" "8 bound, 1 could not be placed"
    cmp -s "$TMP/plain" "$OUT" ||
        fail "without --plugin-dir the bindings differ: $(diff "$TMP/plain" "$OUT")"
fi
# Named again with --plugin-dir, the folder is searched once.
if run_bin "$KSCHED" 0 plugins --plugin-dir "$PLUG/"; then
    grep -q "build tree" "$OUT" && fail "the build tree is searched twice"
fi
# KSCHED_PLUGIN_PATH comes before the build tree, the installed directory
# after it; --no-default-plugin-path leaves all three out.
if run 0 plugins --plugin-dir "$FIX/plugins"; then
    grep '^  ' "$OUT" | sed 's/:.*//' | tr '\n' ' ' >"$TMP/origins"
    has "$TMP/origins" "--plugin-dir   build tree   installed "
fi
KSCHED_PLUGIN_PATH="$FIX/override" "$KSCHED" plugins >"$OUT" 2>"$ERR" ||
    fail "plugins with KSCHED_PLUGIN_PATH failed"
grep '^  ' "$OUT" | sed 's/:.*//' | tr '\n' ' ' >"$TMP/origins"
has "$TMP/origins" "KSCHED_PLUGIN_PATH   build tree   installed "
grep -q '^Probe1 .*override' "$OUT" ||
    fail "KSCHED_PLUGIN_PATH's Probe1 does not override"
if run_bin "$KSCHED" 0 plugins --no-default-plugin-path; then
    has "$OUT" "search path: (empty)"
fi

# A symbolic link to the build tree's ksched is still that ksched.
mkdir -p "$TMP/link" && ln -s "$KSCHED" "$TMP/link/ksched"
if run_bin "$TMP/link/ksched" 0 plugins; then
    has "$OUT" "  build tree: $PLUG"
fi

# A copy of the binary, as `meson install` makes, does not look in the
# build tree: only the installed directory is searched.
mkdir -p "$TMP/bin" && cp "$KSCHED" "$TMP/bin/ksched"
if run_bin "$TMP/bin/ksched" 0 plugins; then
    grep -q "build tree" "$OUT" && fail "an installed copy searches the build tree"
    grep -qF "$PLUG" "$OUT" && fail "an installed copy loads plugins from $PLUG"
    has "$OUT" "  installed: "
    installed=$(sed -n 's/^  installed: //p' "$OUT")
    if [ ! -d "$installed" ]; then
        # Nothing installed on this machine: the default profile's
        # plugins are not found.
        if run_bin "$TMP/bin/ksched" 1 schedule --cluster "$EX"; then
            has "$ERR" "plugin \"PrioritySort\""
            has "$ERR" "was not found in the plugin path $installed;"
        fi
    fi
fi

# A snapshot's ReplicaSets are selector holders: a pod the ReplicaSet owns
# spreads by its selector (PodTopologySpread's system defaults), away from
# the node that already runs one of its pods; without the ReplicaSet the
# plugin has no constraint and skips.
RS="$DATA/replicaset-spread.yaml"
if run 0 schedule --cluster "$RS" --plugin-dir "$PLUG" \
        --no-default-plugin-path --deterministic --explain default/w2; then
    grep -q '^  n1 .*PodTopologySpread [0-9]' "$OUT" ||
        fail "PodTopologySpread did not score the ReplicaSet's pod"
    has "$OUT" "default/w2"
    grep -q '^default/w2 *n2$' "$OUT" || fail "w2 not spread to n2"
fi
grep -v -e '^- kind: ReplicaSet' -e 'name: web-1, namespace' \
    -e 'matchLabels: {app: web}' "$RS" >"$TMP/no-rs.yaml"
if run 0 schedule --cluster "$TMP/no-rs.yaml" --plugin-dir "$PLUG" \
        --no-default-plugin-path --deterministic --explain default/w2; then
    has "$OUT" "PodTopologySpread skipped"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all CLI checks passed"
exit 0
