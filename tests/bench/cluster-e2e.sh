#!/bin/bash
# End-to-end scheduling on a real API server: ksched serve --kubeconfig and
# the real kube-scheduler, each on a fresh etcd + kube-apiserver from the
# shared k8s folder, same workload, same client qps/burst.
#
#   tests/bench/cluster-e2e.sh NODES PODS [ksched|kube-scheduler|both|ceiling|all]
#
# For each scheduler: start the API server, create NODES nodes, start the
# scheduler (admin credentials, qps/burst $QPS, default 5000), wait until it
# is ready, then stream PODS pending pods into it (tests/bench/
# cluster_stream.py, 16 client threads) and wait until every pod has
# spec.nodeName. Prints one JSON line per scheduler: the stream's creation
# rate, pods/s from the first pod created to the last pod bound, the
# scheduling latency p50/p90/p99/max (creation acknowledged to binding seen
# by a watch), the scheduler's CPU seconds and peak RSS, and the API
# server's and etcd's CPU seconds. `ceiling` measures the API server's own
# limit on this machine: PODS pending pods created first, then Bindings
# POSTed by 16 client threads (the shared folder's `load bind`).
# BACKLOG=1 measures the scheduler's own rate instead of the stream's: the
# PODS pending pods are created before the scheduler starts, and the line
# reports the shared folder's `load wait` from the scheduler's start
# (seconds, rate, first_bound_after_s, first_to_last_rate) and the
# scheduler's CPU from its start.
# Env: K8S (default ../shared/k8s beside the checkout), KSCHED (default
# build-release/host/ksched, else build/host/ksched), PLUGINS (its plugin
# dir), QPS (5000).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
k8s=${K8S:-$root/../shared/k8s}
nodes=${1:?usage: cluster-e2e.sh NODES PODS [ksched|kube-scheduler|both]}
pods=${2:?}
which=${3:-both}
qps=${QPS:-5000}
if [[ -z ${KSCHED:-} ]]; then
    if [[ -x $root/build-release/host/ksched ]]; then KSCHED=$root/build-release/host/ksched
    else KSCHED=$root/build/host/ksched; fi
fi
PLUGINS=${PLUGINS:-$(dirname "$(dirname "$KSCHED")")/plugins}
[[ -x $k8s/up ]] || { echo "cluster-e2e: no $k8s/up" >&2; exit 2; }
bin=${K8S_BIN:-$("$k8s/bin/unpack")}
hz=$(getconf CLK_TCK)
cpu() { awk -v hz="$hz" '{print ($14+$15)/hz}' "/proc/$1/stat"; }
hwm() { awk '/VmHWM/{print $2*1024}' "/proc/$1/status"; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN{print a-b}'; }

run() {
    local name=$1 dir sched t0 rc=0
    dir=$(mktemp -d "${TMPDIR:-/tmp}/e2e-$name.XXXXXX")
    "$k8s/up" "$dir/k8s" >/dev/null
    # shellcheck disable=SC1091
    source "$dir/k8s/env"
    "$k8s/load" "$dir/k8s" nodes "$nodes" >/dev/null
    local api0 etcd0 waiter=""
    if [[ ${BACKLOG:-0} == 1 ]]; then
        "$k8s/load" "$dir/k8s" pods "$pods" >/dev/null
        "$k8s/load" "$dir/k8s" wait "$pods" --since "$(date +%s.%N)" \
            >"$dir/wait.json" &
        waiter=$!
    fi
    api0=$(cpu "$APISERVER_PID"); etcd0=$(cpu "$ETCD_PID")
    if [[ $name == ksched ]]; then
        cat > "$dir/config.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$dir/k8s/admin.kubeconfig", qps: $qps, burst: $qps}
EOF
        "$KSCHED" serve --config "$dir/config.yaml" --plugin-dir "$PLUGINS" \
            --listen 127.0.0.1:0 2>"$dir/ksched.log" &
        sched=$!
        for _ in $(seq 300); do
            port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$dir/ksched.log")
            [[ -n $port ]] && curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
            sleep 0.1
        done
        # The worker schedules; the supervisor only watches it.
        meas=$(awk '{print $1}' "/proc/$sched/task/$sched/children")
    else
        cat > "$dir/config.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1beta3
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$dir/k8s/admin.kubeconfig", qps: $qps, burst: $qps}
leaderElection: {leaderElect: false}
EOF
        "$bin/kube-scheduler" --kubeconfig "$dir/k8s/admin.kubeconfig" \
            --config "$dir/config.yaml" --secure-port 0 >"$dir/kube-scheduler.log" 2>&1 &
        sched=$!
        sleep 5 # informers sync; it has no readiness endpoint without a port
        meas=$sched
    fi
    local s0 w
    if [[ -n $waiter ]]; then
        s0=0 # it has been scheduling since it started
        wait "$waiter" || rc=$?
        w=$(cat "$dir/wait.json")
    else
        s0=$(cpu $meas)
        w=$(python3 "$root/tests/bench/cluster_stream.py" "$dir/k8s" "$pods") || rc=$?
    fi
    printf '{"run": "%s", "nodes": %s, "stream": %s, "scheduler_cpu_s": %s, "scheduler_cpu_ms_per_pod": %s, "scheduler_vmhwm": %s, "apiserver_cpu_s": %s, "etcd_cpu_s": %s}\n' \
        "$name" "$nodes" "$w" "$(sub "$(cpu $meas)" "$s0")" \
        "$(awk -v a="$(cpu $meas)" -v b="$s0" -v n="$pods" 'BEGIN{printf "%.2f", 1000*(a-b)/n}')" \
        "$(hwm $meas)" \
        "$(sub "$(cpu "$APISERVER_PID")" "$api0")" "$(sub "$(cpu "$ETCD_PID")" "$etcd0")"
    kill -TERM "$sched"; sleep 1; kill -TERM "$sched" 2>/dev/null || true
    wait "$sched" 2>/dev/null || true
    "$k8s/down" "$dir/k8s" >/dev/null
    rm -rf "$dir"
    return $rc
}

ceiling() {
    local dir
    dir=$(mktemp -d "${TMPDIR:-/tmp}/e2e-ceiling.XXXXXX")
    "$k8s/up" "$dir/k8s" >/dev/null
    "$k8s/load" "$dir/k8s" nodes "$nodes" >/dev/null
    "$k8s/load" "$dir/k8s" pods "$pods" --scheduler nobody --prefix bind- >/dev/null
    "$k8s/load" "$dir/k8s" bind "$pods" --nodes "$nodes" | sed 's/^{/{"run": "apiserver-ceiling", /'
    "$k8s/down" "$dir/k8s" >/dev/null
    rm -rf "$dir"
}

case $which in
    ksched) run ksched ;;
    kube-scheduler) run kube-scheduler ;;
    both) run ksched; run kube-scheduler ;;
    ceiling) ceiling ;;
    all) run ksched; run kube-scheduler; ceiling ;;
    *) echo "cluster-e2e: unknown mode '$which'" >&2; exit 2 ;;
esac
