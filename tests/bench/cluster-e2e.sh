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
# by a watch), the scheduler's CPU seconds and peak RSS, the API
# server's and etcd's CPU seconds, their CPU per pod
# (api_etcd_cpu_ms_per_pod), the CPU the rest of the machine used meanwhile
# (other_cpu_s: the waiting client, the kernel, anything else running; with
# BACKLOG=1 only) and cores_allow_rate, the rate the machine's cores would
# allow if each pod cost only the scheduler's CPU and the API server's and
# etcd's: cores / (scheduler + API server + etcd CPU per pod). For ksched
# also its most TCP connections to the API server (sampled twice a second)
# and the most requests each of its API clients had queued or running
# (its /metrics ksched_cluster_requests_in_flight_max).
# `ceiling` measures the API server's own limits on this machine, each on a
# fresh cluster with PODS pending pods nobody schedules: Bindings alone
# POSTed by 16 client threads (the shared folder's `load bind`), then a
# Binding and an events.k8s.io Event per pod, the writes a scheduler makes
# (tests/bench/cluster_bind_events.py, 16 threads); each line has the API
# server's and etcd's CPU per pod and the rate the cores allow for it.
# BACKLOG=1 measures the scheduler's own rate instead of the stream's: the
# PODS pending pods are created before the scheduler starts, and the line
# reports the shared folder's `load wait` from the scheduler's start
# (seconds, rate, first_bound_after_s, first_to_last_rate) and the
# scheduler's CPU from its start.
# SHAPE=deployment gives every pod the shape of scheduler_perf's
# SchedulingDeployment (cluster_stream.py --shape deployment: 100
# ReplicaSets behind Services, each pod owned by one, so the system-default
# topology spreading applies), streamed or, with BACKLOG=1, created before
# the scheduler starts; the default SHAPE=plain is the shared folder's
# plain pods. SHAPE=spread gives TopologySpreading's pods (zone maxSkew 1,
# DoNotSchedule) and SHAPE=anti SchedulingPodAntiAffinity's (hostname
# anti-affinity within each of 10 apps; PODS at most 10 x NODES). Each
# run's line ends with the placement the scheduler made
# (cluster_stream.py --placement: pods per zone, zone skew, the most pods
# of one app on a node, whether the shape's hard rules held); a run that
# broke them exits 1.
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
shape=${SHAPE:-plain}
case $shape in
    plain | deployment | spread | anti) ;;
    *) echo "cluster-e2e: SHAPE is plain, deployment, spread or anti, not '$shape'" >&2
       exit 2 ;;
esac
if [[ -z ${KSCHED:-} ]]; then
    if [[ -x $root/build-release/host/ksched ]]; then KSCHED=$root/build-release/host/ksched
    else KSCHED=$root/build/host/ksched; fi
fi
PLUGINS=${PLUGINS:-$(dirname "$(dirname "$KSCHED")")/plugins}
[[ -x $k8s/up ]] || { echo "cluster-e2e: no $k8s/up" >&2; exit 2; }
bin=${K8S_BIN:-$("$k8s/bin/unpack")}
hz=$(getconf CLK_TCK)
cores=$(nproc)
cpu() { awk -v hz="$hz" '{print ($14+$15)/hz}' "/proc/$1/stat"; }
hwm() { awk '/VmHWM/{print $2*1024}' "/proc/$1/status"; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN{print a-b}'; }
# CPU seconds the whole machine has spent busy (every core, every process).
busy() { awk -v hz="$hz" '/^cpu /{print ($2+$3+$4+$7+$8+$9)/hz}' /proc/stat; }

run() {
    local name=$1 dir sched t0 rc=0 sampler="" port=""
    dir=$(mktemp -d "${TMPDIR:-/tmp}/e2e-$name.XXXXXX")
    "$k8s/up" "$dir/k8s" >/dev/null
    # shellcheck disable=SC1091
    source "$dir/k8s/env"
    "$k8s/load" "$dir/k8s" nodes "$nodes" >/dev/null
    local api0 etcd0 busy0 waiter=""
    if [[ ${BACKLOG:-0} == 1 ]]; then
        if [[ $shape == plain ]]; then
            "$k8s/load" "$dir/k8s" pods "$pods" >/dev/null
        else
            python3 "$root/tests/bench/cluster_stream.py" "$dir/k8s" "$pods" \
                --shape "$shape" --create-only >/dev/null
        fi
        "$k8s/load" "$dir/k8s" wait "$pods" --since "$(date +%s.%N)" \
            >"$dir/wait.json" &
        waiter=$!
    fi
    api0=$(cpu "$APISERVER_PID"); etcd0=$(cpu "$ETCD_PID"); busy0=$(busy)
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
            # (the log may not exist yet: the shell opens it after the fork)
            port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' \
                "$dir/ksched.log" 2>/dev/null || true)
            [[ -n $port ]] && curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
            sleep 0.1
        done
        # The worker schedules; the supervisor only watches it.
        meas=$(awk '{print $1}' "/proc/$sched/task/$sched/children")
        # Its TCP connections to the API server (HTTP/2: each carries many
        # requests), sampled twice a second; the peak is reported.
        local apiport=${K8S_URL##*:}
        while sleep 0.5; do
            ss -tnpH state established "( dport = :$apiport )" 2>/dev/null |
                grep -c "pid=$meas," || true
        done >"$dir/conns" &
        sampler=$!
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
        w=$(python3 "$root/tests/bench/cluster_stream.py" "$dir/k8s" "$pods" \
            --shape "$shape") || rc=$?
    fi
    local sc api etcd other extra="" conns flight placement
    sc=$(sub "$(cpu $meas)" "$s0")
    api=$(sub "$(cpu "$APISERVER_PID")" "$api0"); etcd=$(sub "$(cpu "$ETCD_PID")" "$etcd0")
    # What else the machine ran meanwhile: the waiting (or streaming)
    # client, the kernel's network work, and whatever else is running.
    other=$(awk -v b="$(busy)" -v b0="$busy0" -v s="$sc" -v a="$api" -v e="$etcd" \
        'BEGIN{printf "%.2f", b-b0-s-a-e}')
    [[ -n $waiter ]] || other=null # the stream's clock is not the scheduler's
    # After the figures above: listing every pod costs the API server.
    placement=$(python3 "$root/tests/bench/cluster_stream.py" "$dir/k8s" \
        "$pods" --shape "$shape" --prefix "" --placement) || rc=1
    if [[ -n $sampler ]]; then
        kill "$sampler" 2>/dev/null || true
        wait "$sampler" 2>/dev/null || true
        conns=$(sort -n "$dir/conns" | tail -1)
        # The most requests each of its clients had queued or running.
        flight=$(curl -sf "http://127.0.0.1:$port/metrics" |
            awk '/^ksched_cluster_requests_in_flight_max/ {
                     sub(/.*client="/, "", $0); split($0, a, /"} /)
                     printf "%s\"%s\": %s", n++ ? ", " : "", a[1], a[2] }')
        extra=", \"peak_connections\": ${conns:-0}, \"peak_requests_in_flight\": {$flight}"
    fi
    # The rate the cores allow if every pod cost only the scheduler's CPU
    # and the API server's and etcd's (the waiting client and anything else
    # on the machine take the rest; the stream's idle_pct shows what was
    # left over).
    printf '{"run": "%s", "shape": "%s", "nodes": %s, "stream": %s, "scheduler_cpu_s": %s, "scheduler_cpu_ms_per_pod": %s, "scheduler_vmhwm": %s, "apiserver_cpu_s": %s, "etcd_cpu_s": %s, "api_etcd_cpu_ms_per_pod": %s, "other_cpu_s": %s, "cores": %s, "cores_allow_rate": %s, "placement": %s%s}\n' \
        "$name" "$shape" "$nodes" "$w" "$sc" \
        "$(awk -v a="$sc" -v n="$pods" 'BEGIN{printf "%.2f", 1000*a/n}')" \
        "$(hwm $meas)" "$api" "$etcd" \
        "$(awk -v a="$api" -v e="$etcd" -v n="$pods" 'BEGIN{printf "%.2f", 1000*(a+e)/n}')" \
        "$other" "$cores" \
        "$(awk -v c="$cores" -v s="$sc" -v a="$api" -v e="$etcd" -v n="$pods" 'BEGIN{printf "%.0f", c*n/(s+a+e)}')" \
        "${placement:-null}" "$extra"
    kill -TERM "$sched"; sleep 1; kill -TERM "$sched" 2>/dev/null || true
    wait "$sched" 2>/dev/null || true
    "$k8s/down" "$dir/k8s" >/dev/null
    rm -rf "$dir"
    return $rc
}

# One of the API server's ceilings on a fresh cluster: PODS pending pods
# nobody schedules, then `what` (bind: the shared folder's `load bind`,
# Bindings only; bind+event: tests/bench/cluster_bind_events.py, a Binding
# and an events.k8s.io Event per pod, the writes a scheduler makes) from 16
# client threads, with the API server's and etcd's CPU over that step.
ceiling() {
    local what=$1 dir api0 etcd0 busy0 w
    dir=$(mktemp -d "${TMPDIR:-/tmp}/e2e-ceiling.XXXXXX")
    "$k8s/up" "$dir/k8s" >/dev/null
    # shellcheck disable=SC1091
    source "$dir/k8s/env"
    "$k8s/load" "$dir/k8s" nodes "$nodes" >/dev/null
    "$k8s/load" "$dir/k8s" pods "$pods" --scheduler nobody --prefix bind- >/dev/null
    api0=$(cpu "$APISERVER_PID"); etcd0=$(cpu "$ETCD_PID"); busy0=$(busy)
    if [[ $what == bind ]]; then
        w=$("$k8s/load" "$dir/k8s" bind "$pods" --nodes "$nodes")
    else
        w=$(python3 "$root/tests/bench/cluster_bind_events.py" "$k8s/load" \
            "$dir/k8s" "$pods" --nodes "$nodes")
    fi
    local api etcd other
    api=$(sub "$(cpu "$APISERVER_PID")" "$api0"); etcd=$(sub "$(cpu "$ETCD_PID")" "$etcd0")
    # The load client (its own share is the load's client_cpu_s) and
    # whatever else ran on the machine meanwhile.
    other=$(awk -v b="$(busy)" -v b0="$busy0" -v a="$api" -v e="$etcd" \
        'BEGIN{printf "%.2f", b-b0-a-e}')
    printf '{"run": "apiserver-ceiling", "writes_per_pod": "%s", "nodes": %s, "load": %s, "apiserver_cpu_s": %s, "etcd_cpu_s": %s, "api_etcd_cpu_ms_per_pod": %s, "other_cpu_s": %s, "cores_allow_rate": %s}\n' \
        "$what" "$nodes" "$w" "$api" "$etcd" \
        "$(awk -v a="$api" -v e="$etcd" -v n="$pods" 'BEGIN{printf "%.2f", 1000*(a+e)/n}')" \
        "$other" \
        "$(awk -v c="$cores" -v a="$api" -v e="$etcd" -v n="$pods" 'BEGIN{printf "%.0f", c*n/(a+e)}')"
    "$k8s/down" "$dir/k8s" >/dev/null
    rm -rf "$dir"
}

case $which in
    ksched) run ksched ;;
    kube-scheduler) run kube-scheduler ;;
    both) run ksched; run kube-scheduler ;;
    ceiling) ceiling bind; ceiling bind+event ;;
    all) run ksched; run kube-scheduler; ceiling bind; ceiling bind+event ;;
    *) echo "cluster-e2e: unknown mode '$which'" >&2; exit 2 ;;
esac
