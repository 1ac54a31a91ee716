#!/bin/sh
# compare.sh BASE_COMMIT [ROW...]: the benchmark as a same-machine ratio.
#
# Builds BASE_COMMIT (release) in a git worktree, with this checkout's
# workload generator (tests/bench/ksched-bench.c), builds this checkout
# (release) too, then runs every ROW with the base build and with this one
# alternately, RUNS times each (default 3), each run a fresh ksched-bench
# process, and prints per row the median pods/s of the base, the median of
# this checkout and their ratio (new / base).
#
# ROW is WORKLOAD[:PCT[:PAR]], e.g. SchedulingBasic/5000Nodes:0:1 (PCT 0 is
# the adaptive percentageOfNodesToScore; defaults 0 and 1). Default rows:
# SchedulingBasic/5000Nodes, TopologySpreading/5000Nodes and
# SchedulingNodeAffinity/5000Nodes, adaptive, parallelism 1.
#
# Environment:
#   RUNS=N          runs per side and row (default 3)
#   NEW_ARGS="..."  extra ksched-bench options for this checkout only
#                   (e.g. "--batching off")
#   BASE_ARGS="..." extra options for the base build only
#   WORK=DIR        where the base worktree and the builds go (default: a
#                   directory under ${TMPDIR:-/tmp}, kept for reuse when
#                   given)
#   NEW_BUILD=DIR   use this existing release build of the checkout
#                   instead of building one under WORK
#
# Exit status: 0, or 1 when a build or a run failed.
set -eu

if [ $# -lt 1 ]; then
    sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
base=$1
shift
src=$(cd "$(dirname "$0")/../.." && pwd)
runs=${RUNS:-3}
work=${WORK:-}
if [ -z "$work" ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/ksched-compare.XXXXXX")
fi
mkdir -p "$work"
rev=$(git -C "$src" rev-parse --short "$base")
wt="$work/base-$rev"

if [ ! -d "$wt" ]; then
    git -C "$src" worktree add --detach "$wt" "$base" >/dev/null
fi
# Both sides generate the same workloads: this checkout's ksched-bench.c is
# built against the base tree too (it compiles against older trees; a
# workload whose objects the base cannot read, Volumes' PVs and claims
# before the object stores, schedules without them there).
if ! cmp -s "$src/tests/bench/ksched-bench.c" "$wt/tests/bench/ksched-bench.c"; then
    cp "$src/tests/bench/ksched-bench.c" "$wt/tests/bench/ksched-bench.c"
fi
if [ ! -f "$wt/build/build.ninja" ]; then
    meson setup "$wt/build" "$wt" --buildtype=release >/dev/null
fi
echo "building base $rev" >&2
ninja -C "$wt/build" -j2 tests/bench/ksched-bench host/ksched >/dev/null
ninja -C "$wt/build" -j2 >/dev/null

nb=${NEW_BUILD:-}
if [ -z "$nb" ]; then
    nb="$work/new"
    [ -f "$nb/build.ninja" ] || meson setup "$nb" "$src" --buildtype=release >/dev/null
fi
echo "building this checkout" >&2
ninja -C "$nb" -j2 >/dev/null

[ $# -gt 0 ] || set -- SchedulingBasic/5000Nodes TopologySpreading/5000Nodes \
    SchedulingNodeAffinity/5000Nodes

# one_run BUILD EXTRA WORKLOAD PCT PAR: pods/s of one run, or "FAILED".
one_run() {
    out=$("$1/tests/bench/ksched-bench" --plugin-dir "$1/plugins" \
        --workload "$3" --percentage "$4" --parallelism "$5" --runs 1 $2 \
        2>/dev/null) || { echo FAILED; return; }
    echo "$out" | awk 'NR == 2 { print $6 }'
}

median() {
    printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
        if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

status=0
printf '%-36s %4s %3s %12s %12s %7s\n' ROW PCT PAR "BASE_PODS/S" "NEW_PODS/S" RATIO
for row in "$@"; do
    w=$(echo "$row" | cut -d: -f1)
    pct=$(echo "$row:" | cut -d: -f2)
    par=$(echo "$row::" | cut -d: -f3)
    [ -n "$pct" ] || pct=0
    [ -n "$par" ] || par=1
    bs="" ns=""
    i=0
    while [ "$i" -lt "$runs" ]; do
        b=$(one_run "$wt/build" "${BASE_ARGS:-}" "$w" "$pct" "$par")
        n=$(one_run "$nb" "${NEW_ARGS:-}" "$w" "$pct" "$par")
        if [ "$b" = FAILED ] || [ "$n" = FAILED ]; then
            echo "compare.sh: $row: a run failed (base: $b, new: $n)" >&2
            status=1
            break
        fi
        bs="$bs $b"
        ns="$ns $n"
        i=$((i + 1))
    done
    [ "$i" -eq "$runs" ] || continue
    # shellcheck disable=SC2086
    bm=$(median $bs)
    # shellcheck disable=SC2086
    nm=$(median $ns)
    printf '%-36s %4s %3s %12.0f %12.0f %6.2fx   (base:%s; new:%s)\n' "$w" "$pct" "$par" \
        "$bm" "$nm" "$(echo "$nm $bm" | awk '{ printf "%.4f", $1 / $2 }')" "$bs" "$ns"
done
exit $status
