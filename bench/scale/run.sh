#!/usr/bin/env bash
# bench/scale: toolmend serve replicas behind a real HAProxy on loopback (issue #32).
#
# Starts the shared mock upstream (../shared/bench/proxy/mock-upstream), three `toolmend serve`
# replicas (release build) and HAProxy (Debian package `haproxy`), all on 127.0.0.1, and shows
#   (a) throughput at $CONNS connections with 1, 2 and 3 replicas behind HAProxy (and one
#       replica without HAProxy, the reference of the same run), with `wrk`;
#   (b) a replica stopped with SIGTERM under load loses no request: its drain, HAProxy's
#       health checks and `retry-on conn-failure empty-response` with `option redispatch`.
# Not in the default test run. Every load run is bounded by wrk -d and an outer `timeout`.
# Needs: cargo (or TOOLMEND_BIN and MOCK_BIN), haproxy, wrk (apt-get install -y haproxy wrk).
# Knobs: DURATION (10 s per cell), WARMUP (3 s), ROUNDS (2), CONNS (64), PORT_BASE (19100),
# STOP_AFTER (seconds into the drain run before SIGTERM; default DURATION/3), OUT_DIR,
# PHASES ("throughput drain"), and, to see what the retries are for, RETRIES (3) and RETRY_ON
# ("conn-failure empty-response"): `RETRIES=0 PHASES=drain` loses requests at the SIGTERM.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SHARED_BENCH="$ROOT/../shared/bench/proxy"

DURATION="${DURATION:-10}"; WARMUP="${WARMUP:-3}"; ROUNDS="${ROUNDS:-2}"; CONNS="${CONNS:-64}"
PORT_BASE="${PORT_BASE:-19100}"        # mock +0, replicas +1..+3, haproxy +10, haproxy stats +11
STOP_AFTER="${STOP_AFTER:-$((DURATION / 3))}"
PHASES="${PHASES:-throughput drain}"
RETRIES="${RETRIES:-3}"; RETRY_ON="${RETRY_ON:-conn-failure empty-response}"
OUT_DIR="${OUT_DIR:-$(mktemp -d -t toolmend-scale-XXXXXX)}"
mkdir -p "$OUT_DIR"
log() { echo "[$(date +%T)] $*" | tee -a "$OUT_DIR/run.log" >&2; }

for tool in haproxy wrk curl; do
    command -v "$tool" >/dev/null || { echo "bench/scale: $tool not found (apt-get install -y haproxy wrk curl)" >&2; exit 1; }
done

# ---- binaries: copied into OUT_DIR so a concurrent build cannot swap them mid-run ----------
if [ -z "${TOOLMEND_BIN:-}" ] || [ -z "${MOCK_BIN:-}" ]; then
    target="${CARGO_TARGET_DIR:-$ROOT/target}"
    log "building release binaries (CARGO_TARGET_DIR=$target)"
    (cd "$ROOT" && cargo build --release --locked --bin toolmend -q)
    (cd "$SHARED_BENCH/mock-upstream" && CARGO_TARGET_DIR="$target" cargo build --release -q)
    TOOLMEND_BIN="${TOOLMEND_BIN:-$target/release/toolmend}"
    MOCK_BIN="${MOCK_BIN:-$target/release/mock-upstream}"
fi
cp "$TOOLMEND_BIN" "$OUT_DIR/toolmend"; cp "$MOCK_BIN" "$OUT_DIR/mock-upstream"
{ haproxy -v | head -1; wrk -v 2>&1 | head -1; "$OUT_DIR/toolmend" --version; nproc; } > "$OUT_DIR/versions.txt" 2>&1 || true

# ---- processes: each in its own session, all stopped on exit -------------------------------
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
start() {  # start NAME CMD... ; sets STARTED to its pid
    local name="$1"; shift
    setsid "$@" >"$OUT_DIR/$name.log" 2>&1 &
    STARTED=$!; PIDS+=("$STARTED")
}
wait_http() {  # wait_http URL: until it answers (≤ 20 s)
    for _ in $(seq 200); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done
    log "no answer from $1"; return 1
}

UP="http://127.0.0.1:$PORT_BASE"
start mock "$OUT_DIR/mock-upstream" "127.0.0.1:$PORT_BASE"
REPLICA_PIDS=()
start_replica() {  # start_replica I
    start "replica$1" "$OUT_DIR/toolmend" serve --upstream "$UP" --listen "127.0.0.1:$((PORT_BASE + $1))"
    REPLICA_PIDS[$1]=$STARTED
    wait_http "http://127.0.0.1:$((PORT_BASE + $1))/healthz"
}
sleep 0.3
for i in 1 2 3; do start_replica "$i"; done

HAPROXY_PID=""
start_haproxy() {  # start_haproxy N: HAProxy in front of replicas 1..N (deploy/haproxy.cfg's defaults)
    local cfg="$OUT_DIR/haproxy-$1.cfg" i
    cat >"$cfg" <<CFG
global
    maxconn 4096
defaults
    mode http
    option redispatch
    retries $RETRIES
    retry-on $RETRY_ON
    timeout connect 2s
    timeout client 10m
    timeout server 10m
    timeout http-keep-alive 10s
frontend llm
    bind 127.0.0.1:$((PORT_BASE + 10))
    default_backend toolmend
backend toolmend
    balance leastconn
    option httpchk GET /healthz
    http-check expect status 200
    default-server check inter 1s fall 2 rise 2
CFG
    for i in $(seq "$1"); do echo "    server r$i 127.0.0.1:$((PORT_BASE + i))" >>"$cfg"; done
    printf 'frontend stats\n    bind 127.0.0.1:%s\n    stats enable\n    stats uri /stats\n' "$((PORT_BASE + 11))" >>"$cfg"
    haproxy -c -q -f "$cfg"
    start "haproxy-$1" haproxy -db -f "$cfg"
    HAPROXY_PID=$STARTED
    wait_http "http://127.0.0.1:$((PORT_BASE + 10))/healthz"
}
stop_haproxy() { kill -TERM "$HAPROXY_PID" 2>/dev/null || true; wait "$HAPROXY_PID" 2>/dev/null || true; }

LB="http://127.0.0.1:$((PORT_BASE + 10))"
load() {  # load URL SECONDS BODY -> the RESULT line of ../shared/bench/proxy/post.lua
    BODY_FILE="$3" timeout $(($2 + 30)) wrk -t2 -c"$CONNS" -d"${2}s" --timeout 10s \
        -s "$SHARED_BENCH/post.lua" "$1" | grep '^RESULT'
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }

RES="$OUT_DIR/results.tsv"
printf 'round\tsetup\treplicas\trps\tp50_ms\tp99_ms\trequests\terrors\n' >"$RES"
row() {  # row ROUND SETUP N RESULT
    printf '%s\t%s\t%s\t%s\t%.3f\t%.3f\t%s\t%s\n' "$1" "$2" "$3" "$(field rps "$4")" \
        "$(echo "$(field p50_us "$4") / 1000" | bc -l)" "$(echo "$(field p99_us "$4") / 1000" | bc -l)" \
        "$(field requests "$4")" "$(field errors "$4")" | tee -a "$RES"
}

# ---- (a) throughput with 1, 2, 3 replicas ---------------------------------------------------
BODY="$SHARED_BENCH/body.json"
for round in $(seq "$ROUNDS"); do
    [[ " $PHASES " == *" throughput "* ]] || break
    log "round $round: one replica, no HAProxy (reference)"
    load "http://127.0.0.1:$((PORT_BASE + 1))" "$WARMUP" "$BODY" >/dev/null
    row "$round" direct-replica 1 "$(load "http://127.0.0.1:$((PORT_BASE + 1))" "$DURATION" "$BODY")"
    for n in 1 2 3; do
        log "round $round: $n replica(s) behind HAProxy"
        start_haproxy "$n"
        load "$LB" "$WARMUP" "$BODY" >/dev/null
        row "$round" haproxy "$n" "$(load "$LB" "$DURATION" "$BODY")"
        stop_haproxy
    done
done

# ---- (b) SIGTERM one of two replicas under load ---------------------------------------------
DRAIN="$OUT_DIR/drain.tsv"
printf 'body\trequests\terrors\treplica_exit\thaproxy_retries\n' >"$DRAIN"
for body in body.json body_stream.json; do
    [[ " $PHASES " == *" drain "* ]] || break
    log "drain: two replicas behind HAProxy, $body, SIGTERM to replica 1 after ${STOP_AFTER}s"
    start_haproxy 2
    load "$LB" "$DURATION" "$SHARED_BENCH/$body" >"$OUT_DIR/drain-$body.result" &
    loader=$!
    sleep "$STOP_AFTER"
    kill -TERM "${REPLICA_PIDS[1]}"
    status=0; wait "${REPLICA_PIDS[1]}" || status=$?
    wait "$loader"
    result="$(cat "$OUT_DIR/drain-$body.result")"
    stats="$(curl -fsS "http://127.0.0.1:$((PORT_BASE + 11))/stats;csv" | awk -F, '$1=="toolmend" && $2=="BACKEND"')"
    # HAProxy's CSV: wretr (requests tried again) is field 16. (wredis is not shown: HAProxy
    # counts every kept-alive client's request that lands on another replica than its last.)
    printf '%s\t%s\t%s\t%s\t%s\n' "$body" "$(field requests "$result")" "$(field errors "$result")" \
        "$status" "$(cut -d, -f16 <<<"$stats")" | tee -a "$DRAIN"
    stop_haproxy
    start_replica 1
done

log "results in $OUT_DIR (results.tsv, drain.tsv, versions.txt, logs)"
