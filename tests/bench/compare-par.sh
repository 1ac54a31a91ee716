#!/bin/sh
# compare-par.sh BASE_BUILD NEW_BUILD [ROW...]: two release builds, each at
# parallelism 1 and 2, alternated.
#
# For every ROW, runs ksched-bench of BASE_BUILD and NEW_BUILD (each with
# its own plugins) at parallelism 1 and 2, in turn (base 1, new 1, base 2,
# new 2), RUNS times (default 3), each run its own process, and prints one
# line: the median pods/s of each of the four with the median CPU us per
# pod in brackets, then the raw pods/s of every run. Build the base with
# tests/bench/compare.sh (it leaves BASE's build in its WORK folder) or by
# hand (`meson setup B --buildtype=release` in a worktree of the base).
#
# ROW is LABEL=WORKLOAD:PCT[:PODS[:EXTRA]], e.g.
#   "basic=SchedulingBasic/5000Nodes:0"
#   "off=SchedulingBasic/5000Nodes:100:3000:--batching off"
# Default rows: the table in the README's Performance section.
#
# Before the first row and after the last, NEW_BUILD's cpu-ceiling (when
# built) prints what a second thread gains on this machine at that time
# on work with no coordination at all: read the parallelism-2 columns
# against it.
#
# Exit status: 0, or 1 when a run failed (its column reads FAILED).
set -u
if [ $# -lt 2 ]; then
    sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
base=$1
new=$2
shift 2
runs=${RUNS:-3}
status=0

# one BUILD WORKLOAD PCT PAR PODS EXTRA: "pods/s cpu_us" of one run
one() {
    out=$("$1/tests/bench/ksched-bench" --plugin-dir "$1/plugins" -w "$2" \
        -P "$3" -j "$4" ${5:+-N "$5"} $6 2>/dev/null) || {
        echo "FAILED FAILED"
        return
    }
    echo "$out" | awk 'NR == 2 { print $6, $(NF - 1) }'
}

med() {
    printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
        if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
        else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

row() { # LABEL WORKLOAD PCT PODS EXTRA
    rb1="" rb2="" rn1="" rn2="" cb1="" cb2="" cn1="" cn2=""
    i=0
    while [ "$i" -lt "$runs" ]; do
        for par in 1 2; do
            for side in b n; do
                b=$base
                [ $side = n ] && b=$new
                # shellcheck disable=SC2046
                set -- $(one "$b" "$W" "$P" "$par" "$N" "$X")
                [ "$1" = FAILED ] && status=1
                eval "r$side$par=\"\$r$side$par $1\"; c$side$par=\"\$c$side$par $2\""
            done
        done
        i=$((i + 1))
    done
    # shellcheck disable=SC2086
    printf '%s|%s (%s)|%s (%s)|%s (%s)|%s (%s)|base 1:%s; base 2:%s; new 1:%s; new 2:%s\n' \
        "$L" "$(med $rb1)" "$(med $cb1)" "$(med $rb2)" "$(med $cb2)" \
        "$(med $rn1)" "$(med $cn1)" "$(med $rn2)" "$(med $cn2)" \
        "$rb1" "$rb2" "$rn1" "$rn2"
}

if [ $# -eq 0 ]; then
    set -- "SchedulingBasic/5000Nodes adaptive=SchedulingBasic/5000Nodes:0" \
        "SchedulingBasic/5000Nodes pct100=SchedulingBasic/5000Nodes:100" \
        "SchedulingBasic/5000Nodes pct100 batching off=SchedulingBasic/5000Nodes:100:3000:--batching off" \
        "TopologySpreading/5000Nodes adaptive=TopologySpreading/5000Nodes:0" \
        "SchedulingNodeAffinity/5000Nodes adaptive=SchedulingNodeAffinity/5000Nodes:0" \
        "SchedulingDeployment/5000Nodes adaptive, 3,000 pods=SchedulingDeployment/5000Nodes:0:3000" \
        "SchedulingPodAntiAffinity/5000Nodes adaptive=SchedulingPodAntiAffinity/5000Nodes:0" \
        "PreemptionBasic/500Nodes adaptive=PreemptionBasic/500Nodes:0" \
        "SchedulingWithMixedChurn/1000Nodes adaptive=SchedulingWithMixedChurn/1000Nodes:0" \
        "SchedulingBasic/130000Nodes adaptive, 10,000 pods=SchedulingBasic/130000Nodes:0" \
        "SchedulingDeployment/130000Nodes adaptive, 10,000 pods=SchedulingDeployment/130000Nodes:0"
fi
ceiling() {
    [ -x "$new/tests/bench/cpu-ceiling" ] || return 0
    "$new/tests/bench/cpu-ceiling" --pairs 5 --ms 50 | sed "s/^/cpu-ceiling $1: /"
}
ceiling before
echo "row|base par 1 pods/s (CPU us/pod)|base par 2|new par 1|new par 2|raw pods/s"
for spec in "$@"; do
    L=${spec%%=*}
    r=${spec#*=}
    W=$(echo "$r" | cut -d: -f1)
    P=$(echo "$r:" | cut -d: -f2)
    N=$(echo "$r::" | cut -d: -f3)
    X=$(echo "$r:::" | cut -d: -f4)
    [ -n "$P" ] || P=0
    row
done
ceiling after
exit $status
