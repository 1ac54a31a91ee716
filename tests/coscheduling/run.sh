#!/bin/sh
# Builds the Coscheduling example plugin the way an author outside the tree
# would (installed SDK headers, pkg-config, the plugin's own Makefile), then
# schedules cluster.yaml (+ gangs.yaml) of this folder with it and checks
# the outcome.
#
# usage: run.sh KSCHED BUILD_DIR PLUGIN_SRC_DIR TEST_DIR
set -u

if [ $# -ne 4 ]; then
    echo "usage: $0 KSCHED BUILD_DIR PLUGIN_SRC_DIR TEST_DIR" >&2
    exit 2
fi
ksched=$1
build=$2
src=$3
here=$4

tmp=$(mktemp -d)
# No EXIT trap: dash loses the trap's string when it runs it, which the
# valgrind test setup (it wraps this script) reports as a leak.
cleanup() { rm -rf "$tmp"; }
trap 'cleanup; exit 1' INT TERM
failures=0

ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }
die() {
    echo "FAIL: $*"
    cleanup
    exit 1
}

# --- 1. install the SDK into a staging root -----------------------------------

# Only the headers and ksched-plugin.pc (install tag "devel"): what a plugin
# author gets from a -dev package.
meson install -C "$build" --destdir "$tmp/root" --no-rebuild --tags devel \
    >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; die "meson install"; }
pc=$(find "$tmp/root" -name ksched-plugin.pc | head -n 1)
[ -n "$pc" ] || die "ksched-plugin.pc was not installed"
PKG_CONFIG_PATH=$(dirname "$pc")
PKG_CONFIG_SYSROOT_DIR=$tmp/root
PKG_CONFIG_LIBDIR=$PKG_CONFIG_PATH # nothing from the build machine's own .pc
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
unset KSCHED_PLUGIN_PATH

cflags=$(pkg-config --cflags ksched-plugin) || die "pkg-config --cflags"
case "$cflags" in
    -I"$tmp/root"/*) ok "pkg-config --cflags points into the staging root: $cflags" ;;
    *) die "pkg-config --cflags does not point into $tmp/root: '$cflags'" ;;
esac
incdir=${cflags#-I}
incdir=${incdir%% *}
for h in plugin.h types.h helpers.h; do
    [ -f "$incdir/ksched/$h" ] || die "installed SDK lacks ksched/$h"
done

# --- 2. build the plugin and the test fixture outside the tree ----------------

mkdir -p "$tmp/src" "$tmp/plugins"
cp "$src/coscheduling.c" "$src/Makefile" "$tmp/src/" || die "copy plugin sources"
make -C "$tmp/src" >"$tmp/make.log" 2>&1 || { cat "$tmp/make.log"; die "make"; }
[ -f "$tmp/src/coscheduling.so" ] || die "make did not produce coscheduling.so"
ok "the Makefile built coscheduling.so against the installed SDK"
cp "$tmp/src/coscheduling.so" "$tmp/plugins/"

# shellcheck disable=SC2086 # $cflags is a list of flags
cc -shared -fPIC -fvisibility=hidden -std=c11 -Wall -Wextra -Werror $cflags \
    "$here/reject_labelled.c" -o "$tmp/plugins/rejectlabelled.so" ||
    die "building the RejectLabelled fixture"

if command -v nm >/dev/null 2>&1; then
    syms=$(nm -D --defined-only "$tmp/plugins/coscheduling.so" | awk '{print $3}' |
        grep -v '^_' | tr '\n' ' ')
    if [ "$syms" = "ks_plugin_descriptor " ]; then
        ok "coscheduling.so exports only ks_plugin_descriptor"
    else
        bad "coscheduling.so exports: $syms"
    fi
fi

# --- helpers over `ksched schedule -o yaml` ----------------------------------

# One line per pod: "bound NS/POD NODE" or "unplaced NS/POD MESSAGE".
flatten() {
    awk '/^bindings:/ { s = "b" }
         /^unschedulable:/ { s = "u" }
         /^otherSchedulers:/ { s = "o" }
         /^- pod: / { p = $3 }
         s == "b" && /^  node: / { print "bound " p " " $2 }
         s == "u" && /^  message: / { sub(/^  message: /, ""); print "unplaced " p " " $0 }' "$1"
}

# A batch run that never ends shows up as a timeout, not a hung test.
limit=
if command -v timeout >/dev/null 2>&1; then
    limit="timeout 60"
fi

# schedule NAME WITH_GANGS ARGS... : schedules cluster.yaml (and gangs.yaml
# when WITH_GANGS is 1) with ARGS, keeps the exit code in $rc and the
# flattened result in $tmp/NAME.txt.
schedule() {
    name=$1
    if [ "$2" -eq 1 ]; then
        set -- "$@" --cluster "$here/gangs.yaml"
    fi
    shift 2
    $limit "$ksched" schedule --cluster "$here/cluster.yaml" "$@" \
        --plugin-dir "$build/plugins" --plugin-dir "$tmp/plugins" \
        --no-default-plugin-path --deterministic -o yaml \
        >"$tmp/$name.yaml" 2>"$tmp/$name.err"
    rc=$?
    [ "$rc" -ne 124 ] || bad "$name: ksched schedule did not finish in 60s"
    flatten "$tmp/$name.yaml" >"$tmp/$name.txt"
}

# expect_rc RUN CODE: the exit code, and what it stands for in the output:
# 3 (some pods could not be placed) with an unschedulable list, 0 without
# one; a finished run prints its result on stdout and nothing on stderr.
expect_rc() {
    if [ "$rc" -ne "$2" ]; then
        bad "$1: exit code $rc, expected $2"
        cat "$tmp/$1.err"
        return
    fi
    if [ -s "$tmp/$1.err" ]; then
        bad "$1: exit code $2 but stderr says: $(head -n 3 "$tmp/$1.err")"
    elif [ "$2" -eq 3 ] && ! grep -q '^unschedulable:$' "$tmp/$1.yaml"; then
        bad "$1: exit code 3 but no unschedulable pods listed"
    elif [ "$2" -eq 0 ] && grep -q '^unschedulable:$' "$tmp/$1.yaml"; then
        bad "$1: exit code 0 but unschedulable pods listed"
    else
        ok "$1: exit code $2, output agrees"
    fi
}

expect_bound() {
    run=$1
    shift
    for p in "$@"; do
        if grep -q "^bound default/$p " "$tmp/$run.txt"; then
            ok "$run: $p bound ($(grep "^bound default/$p " "$tmp/$run.txt" | cut -d' ' -f3))"
        else
            bad "$run: $p not bound: $(grep -E "^[a-z]+ default/$p " "$tmp/$run.txt")"
        fi
    done
}

# expect_unplaced RUN POD TEXT: POD is unplaced and its message contains TEXT
# (as printed in the YAML output, so quotes appear as \").
expect_unplaced() {
    if grep "^unplaced default/$2 " "$tmp/$1.txt" | grep -qF -- "$3"; then
        ok "$1: $2 unplaced: $3"
    else
        bad "$1: $2 should be unplaced with '$3'; got: $(grep -E "^[a-z]+ default/$2 " "$tmp/$1.txt")"
    fi
}

expect_counts() {
    nb=$(grep -c '^bound ' "$tmp/$1.txt")
    nu=$(grep -c '^unplaced ' "$tmp/$1.txt")
    if [ "$nb" -eq "$2" ] && [ "$nu" -eq "$3" ]; then
        ok "$1: $nb bound, $nu unplaced"
    else
        bad "$1: $nb bound and $nu unplaced, expected $2 and $3"
        cat "$tmp/$1.yaml"
    fi
}

# --- 3. control: without Coscheduling every pod but g3-c fits -----------------

schedule control 1
expect_rc control 3
expect_counts control 16 1
expect_bound control g1-a g1-b g1-c g2-a g2-b g3-a g3-b g4-a g4-b g4-c g5-a \
    g6-1 g7-a g7-b g7-c solo
expect_unplaced control g3-c "Insufficient cpu"

# --- 4. Coscheduling at every point (multiPoint) ------------------------------

schedule multipoint 1 --config "$here/multipoint.yaml"
expect_rc multipoint 3
expect_counts multipoint 5 12
# g1: the third member reaches min-available 3 and the waiting two are allowed.
expect_bound multipoint g1-a g1-b g1-c solo
# g6: one member already runs on node-3, so the pending one completes min 2.
expect_bound multipoint g6-1
# g2: two pods can never make min-available 3 (PreFilter).
expect_unplaced multipoint g2-a 'pod group \"g2\" has 2 pods, fewer than min-available 3'
expect_unplaced multipoint g2-b 'pod group \"g2\" has 2 pods, fewer than min-available 3'
# g3: g3-c fits nowhere; PostFilter releases g3-a and g3-b and holds g3 back.
for p in g3-a g3-b g3-c; do
    expect_unplaced multipoint $p 'pod group \"g3\" failed: member default/g3-c is unschedulable'
done
# g4: the fixture rejects g4-c at Permit; its Unreserve releases the others.
expect_unplaced multipoint g4-a 'pod group \"g4\" failed: member default/g4-c was unreserved'
expect_unplaced multipoint g4-b 'pod group \"g4\" failed: member default/g4-c was unreserved'
expect_unplaced multipoint g4-c 'rejected at Permit on node '
expect_unplaced multipoint g5-a 'pod group \"g5\": annotation scheduling.x-k8s.io/min-available is \"three\", not a positive integer'
# g7: g7-c is refused for its annotation; g7-a and g7-b (3 members known)
# wait at Permit and time out together. The first one handled keeps the
# host's timeout message; its Unreserve holds g7 back, so the other one,
# retried, is refused at PreFilter with the reason Unreserve recorded.
expect_unplaced multipoint g7-c 'pod group \"g7\": annotation scheduling.x-k8s.io/min-available is \"0\", not a positive integer'
n_timeout=0
n_held=0
for p in g7-a g7-b; do
    line=$(grep "^unplaced default/$p " "$tmp/multipoint.txt")
    case "$line" in
        *'rejected due to timeout after waiting 30s at plugin Coscheduling'*)
            n_timeout=$((n_timeout + 1)) ;;
        *'pod group \"g7\" failed: member default/g7-'[ab]' waited 30s at Permit and the group did not reach min-available'*)
            n_held=$((n_held + 1)) ;;
    esac
done
if [ "$n_timeout" -eq 1 ] && [ "$n_held" -eq 1 ]; then
    ok "multipoint: g7-a and g7-b timed out at Permit, one held back by Unreserve"
else
    bad "multipoint: g7-a/g7-b: $n_timeout timeout and $n_held held-back messages, expected 1 and 1"
    grep -E '^[a-z]+ default/g7-' "$tmp/multipoint.txt"
fi

# --- 5. Coscheduling at Reserve and Permit only: the Permit timeout -----------

# Only cluster.yaml: g2 is the one group that cannot complete. (Several
# such groups timing out at different times keep sending each other back
# to the queue; see the plugin's README, "Batch runs".)
schedule permit-only 0 --config "$here/permit-only.yaml"
expect_rc permit-only 3
expect_counts permit-only 5 3
expect_bound permit-only g1-a g1-b g1-c g6-1 solo
for p in g2-a g2-b; do
    expect_unplaced permit-only $p 'rejected due to timeout after waiting 45s at plugin Coscheduling'
done
expect_unplaced permit-only g5-a 'pod group \"g5\": annotation scheduling.x-k8s.io/min-available is \"three\", not a positive integer'

# --- 6. PodGroup objects in the snapshot ------------------------------------

# podgroups.yaml alone (its own nodes): PodGroups beside their pods, in a
# List and in documents of their own. Prints "PATH BODY" per recorded
# request (BODY as the YAML shows it, quotes as \").
requests_of() {
    awk '/^requests:/ { r = 1; next }
         r && /^- plugin: / { plugin = $3 }
         r && /^  method: / { method = $2 }
         r && /^  path: / { path = $2; gsub(/"/, "", path) }
         r && /^  contentType: / { ct = $2; gsub(/"/, "", ct) }
         r && /^  body: / { sub(/^  body: /, ""); print plugin " " method " " ct " " path " " $0 }' "$1"
}

pg_schedule() {
    $limit "$ksched" schedule --cluster "$here/podgroups.yaml" "$@" \
        --plugin-dir "$build/plugins" --plugin-dir "$tmp/plugins" \
        --no-default-plugin-path --deterministic -o yaml \
        >"$tmp/$name.yaml" 2>"$tmp/$name.err"
    rc=$?
    [ "$rc" -ne 124 ] || bad "$name: ksched schedule did not finish in 60s"
    flatten "$tmp/$name.yaml" >"$tmp/$name.txt"
    requests_of "$tmp/$name.yaml" >"$tmp/$name.req"
}

# expect_placed RUN bound|unplaced NS/POD [TEXT]
expect_placed() {
    if grep "^$2 $3 " "$tmp/$1.txt" | grep -qF -- "${4:-}"; then
        ok "$1: $3 $2${4:+: $4}"
    else
        bad "$1: $3 should be $2${4:+ with '$4'}; got: $(grep -E "^[a-z]+ $3 " "$tmp/$1.txt")"
    fi
}

# expect_status RUN NS NAME BODY: the last status PATCH of PodGroup NS/NAME
# says BODY.
expect_status() {
    path="/apis/scheduling.x-k8s.io/v1alpha1/namespaces/$2/podgroups/$3/status"
    last=$(grep -F " $path " "$tmp/$1.req" | tail -n 1)
    case "$last" in
        "Coscheduling PATCH application/merge-patch+json $path $4")
            ok "$1: PodGroup $2/$3: last status PATCH $4 ($(grep -cF " $path " "$tmp/$1.req") in all)" ;;
        *) bad "$1: PodGroup $2/$3: last status PATCH '$last', expected body $4"
           cat "$tmp/$1.req" ;;
    esac
}

name=podgroups
pg_schedule --config "$here/multipoint.yaml"
expect_rc podgroups 3
expect_counts podgroups 8 5
# pg-ok: minMember 3 from the PodGroup; its pods have no annotation.
for p in default/pg-ok-0 default/pg-ok-1 default/pg-ok-2 team/t-0 team/t-1 \
    default/pg-run-1 default/pg-anno-0 default/pg-anno-1; do
    expect_placed podgroups bound $p
done
# pg-short: the PodGroup's minMember 3 wins over the pods' annotation "2".
expect_placed podgroups unplaced default/pg-short-0 \
    'pre-filter pod pg-short-0 cannot find enough sibling pods, current pods number: 2, minMember of group: 3'
expect_placed podgroups unplaced default/pg-short-1 \
    'pre-filter pod pg-short-1 cannot find enough sibling pods, current pods number: 2, minMember of group: 3'
for p in pg-big-0 pg-big-1; do
    expect_placed podgroups unplaced default/$p \
        'PodGroup default/pg-big gets rejected due to Pod pg-big-1 is unschedulable even after PostFilter'
done
expect_placed podgroups unplaced default/pg-bad-0 \
    'PodGroup default/pg-bad: spec.minMember is not an integer'
# The status of each PodGroup whose members bound: the last PATCH has
# them all (pg-run-0 ran already: it counts).
expect_status podgroups default pg-ok '"{\"status\":{\"phase\":\"Scheduled\",\"scheduled\":3}}"'
expect_status podgroups team pg-ok '"{\"status\":{\"phase\":\"Scheduled\",\"scheduled\":2}}"'
expect_status podgroups default pg-run '"{\"status\":{\"phase\":\"Scheduled\",\"scheduled\":2}}"'
others=$(grep -vE ' /apis/scheduling.x-k8s.io/v1alpha1/namespaces/(default/podgroups/pg-ok|team/podgroups/pg-ok|default/podgroups/pg-run)/status ' "$tmp/podgroups.req")
if [ -z "$others" ]; then
    ok "podgroups: no other request (none for pg-short, pg-big, or pg-anno without a PodGroup)"
else
    bad "podgroups: unexpected requests: $others"
fi

# Reserve and Permit only: pg-short's members wait at Permit for the
# PodGroup's scheduleTimeoutSeconds (7), not the args' 45; without
# PostBind no status is written.
name=podgroups-permit
pg_schedule --config "$here/permit-only.yaml"
expect_rc podgroups-permit 3
expect_counts podgroups-permit 8 5
for p in pg-short-0 pg-short-1; do
    expect_placed podgroups-permit unplaced default/$p \
        'rejected due to timeout after waiting 7s at plugin Coscheduling'
done
expect_placed podgroups-permit unplaced default/pg-big-0 \
    'rejected due to timeout after waiting 45s at plugin Coscheduling'
if grep -q '^requests: \[\]$' "$tmp/podgroups-permit.yaml"; then
    ok "podgroups-permit: no request without PostBind"
else
    bad "podgroups-permit: requests recorded without PostBind"
    cat "$tmp/podgroups-permit.req"
fi

# --- 7. arguments are checked at create ---------------------------------------

# check_args NAME ARGS_LINE EXPECTED_TEXT
check_args() {
    cat >"$tmp/$1.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
  pluginConfig:
  - name: Coscheduling
    args:
      $2
EOF
    "$ksched" validate --config "$tmp/$1.yaml" --plugin-dir "$build/plugins" \
        --plugin-dir "$tmp/plugins" --no-default-plugin-path \
        >"$tmp/$1.out" 2>&1
    rc=$?
    if [ "$rc" -eq 1 ] && grep -qF -- "$3" "$tmp/$1.out"; then
        ok "args $1: refused with '$3'"
    else
        bad "args $1: exit code $rc, expected 1 and '$3' in:"
        cat "$tmp/$1.out"
    fi
}
check_args unknown-key 'permitWaitingTime: 10' \
    'line 12, column 26: unknown field "permitWaitingTime" (valid: permitWaitingTimeSeconds, deniedPGExpirationTimeSeconds)'
check_args zero-timeout 'permitWaitingTimeSeconds: 0' \
    'line 12, column 33: permitWaitingTimeSeconds must be a positive integer, got 0'
check_args text-timeout 'permitWaitingTimeSeconds: soon' \
    'line 12, column 33: permitWaitingTimeSeconds must be an integer'
check_args negative-denied 'deniedPGExpirationTimeSeconds: -5' \
    'deniedPGExpirationTimeSeconds must be a positive integer, got -5'

cleanup
if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
exit 0
