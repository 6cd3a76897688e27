#!/usr/bin/env bash
# The proxy's own CPU per stream and req/s, for the Responses, Anthropic and Ollama 50-event
# streams of proxy-load's mock, with wrk: the mock called directly, through the ideal hop
# (../shared/bench/proxy/passthrough) and through each toolmend binary named, in one run.
# Loopback only; every wrk run is bounded by -d and an outer timeout, the mock by --serve-mock.
#
# Usage: bench/proxy-load/stream-cpu.sh NAME=BINARY [NAME=BINARY ...]   (from the repo root)
# Env: MOCK (proxy-load binary), PASSTHROUGH (ideal hop binary, optional), POST_LUA (wrk
# script: ../shared/bench/proxy/post.lua), DURATION (4 s), WARMUP (2 s), ROUNDS (2),
# CONCS ("1 64"), APIS ("responses anthropic ollama"), PORT_BASE (18200), OUT_DIR.
# Output: one TSV line per cell on stdout (round, api, conc, target, req/s, p50 us, CPU us
# per stream); CPU is utime+stime of /proc/PID/stat over the timed run (not the warm-up).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
MOCK="${MOCK:?the proxy-load binary}"
PASSTHROUGH="${PASSTHROUGH:-}"
POST_LUA="${POST_LUA:-$HERE/../../../shared/bench/proxy/post.lua}"
DURATION="${DURATION:-4}"; WARMUP="${WARMUP:-2}"; ROUNDS="${ROUNDS:-2}"
CONCS="${CONCS:-1 64}"; APIS="${APIS:-responses anthropic ollama}"
PORT_BASE="${PORT_BASE:-18200}"
OUT_DIR="${OUT_DIR:-$(mktemp -d)}"; mkdir -p "$OUT_DIR"
TICK_US=$((1000000 / $(getconf CLK_TCK)))
UP="http://127.0.0.1:$PORT_BASE"

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

# Request bodies (valid call: the mock's `bench-valid` model), streamed.
SYSTEM="You are a helpful assistant that uses tools."
USER="What's the weather in San Francisco for the next 5 days? I am planning an outdoor event."
PARAMS='{"type":"object","properties":{"location":{"type":"string","description":"City and state"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer","minimum":1,"maximum":14},"include_hourly":{"type":"boolean"},"fields":{"type":"array","items":{"type":"string"}},"notes":{"type":"string"}},"required":["location"]}'
DESC='"name":"get_weather","description":"Get the weather forecast for a location"'
cat > "$OUT_DIR/responses.json" <<EOF
{"model":"bench-valid","instructions":"$SYSTEM","input":[{"role":"user","content":"$USER"}],"tools":[{"type":"function",$DESC,"parameters":$PARAMS}],"tool_choice":"auto","stream":true}
EOF
cat > "$OUT_DIR/anthropic.json" <<EOF
{"model":"bench-valid","max_tokens":1024,"system":"$SYSTEM","messages":[{"role":"user","content":"$USER"}],"tools":[{$DESC,"input_schema":$PARAMS}],"stream":true}
EOF
cat > "$OUT_DIR/ollama.json" <<EOF
{"model":"bench-valid","messages":[{"role":"system","content":"$SYSTEM"},{"role":"user","content":"$USER"}],"tools":[{"type":"function","function":{$DESC,"parameters":$PARAMS}}],"stream":true}
EOF
path_of() { case "$1" in responses) echo /v1/responses ;; anthropic) echo /v1/messages ;; ollama) echo /api/chat ;; esac; }

"$MOCK" --serve-mock 3600 --mock-listen "127.0.0.1:$PORT_BASE" > "$OUT_DIR/mock.log" 2>&1 &
PIDS+=($!)
TARGETS=("direct=$UP=")
port=$((PORT_BASE + 1))
if [ -n "$PASSTHROUGH" ]; then
  "$PASSTHROUGH" "127.0.0.1:$port" "$UP" > "$OUT_DIR/ideal.log" 2>&1 &
  PIDS+=($!); TARGETS+=("ideal=http://127.0.0.1:$port=$!"); port=$((port + 1))
fi
for spec in "$@"; do
  name="${spec%%=*}"; bin="${spec#*=}"
  "$bin" serve --upstream "$UP" --listen "127.0.0.1:$port" > "$OUT_DIR/$name.log" 2>&1 &
  PIDS+=($!); TARGETS+=("$name=http://127.0.0.1:$port=$!"); port=$((port + 1))
done
sleep 1
for t in "${TARGETS[@]}"; do
  IFS== read -r name url pid <<< "$t"
  for api in $APIS; do
    ok=""
    for _ in $(seq 40); do
      if curl -sf -m 5 -XPOST "$url$(path_of "$api")" -H 'Content-Type: application/json' \
           --data-binary @"$OUT_DIR/$api.json" -o "$OUT_DIR/check-$name-$api.out"; then ok=1; break; fi
      sleep 0.5
    done
    [ -n "$ok" ] || { echo "$name does not answer $api" >&2; exit 1; }
  done
done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
wrk_run() {  # wrk_run URL API CONNS SECONDS -> RESULT line
  local threads=1; [ "$3" -gt 1 ] && threads=2
  BODY_FILE="$OUT_DIR/$2.json" REQ_PATH="$(path_of "$2")" timeout $(($4 + 30)) \
    wrk -t"$threads" -c"$3" -d"$4s" --timeout 30s -s "$POST_LUA" "$1" | grep '^RESULT' || echo "RESULT failed"
}
printf 'round\tapi\tconc\ttarget\trps\tp50_us\tcpu_us_per_stream\terrors\n'
for round in $(seq "$ROUNDS"); do
  for api in $APIS; do
    for conc in $CONCS; do
      for t in "${TARGETS[@]}"; do
        IFS== read -r name url pid <<< "$t"
        wrk_run "$url" "$api" "$conc" "$WARMUP" > /dev/null
        before=0; [ -n "$pid" ] && before=$(cpu_ticks "$pid")
        line="$(wrk_run "$url" "$api" "$conc" "$DURATION")"
        after=0; [ -n "$pid" ] && after=$(cpu_ticks "$pid")
        echo "$line" | awk -v r="$round" -v a="$api" -v c="$conc" -v n="$name" \
          -v ticks="$((after - before))" -v tick_us="$TICK_US" -v has_pid="$pid" '{
            for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            cpu = (has_pid == "" || v["requests"] == 0) ? "-" : sprintf("%.0f", ticks * tick_us / v["requests"])
            printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r, a, c, n, v["rps"], v["p50_us"], cpu, v["errors"] }'
      done
    done
  done
done
