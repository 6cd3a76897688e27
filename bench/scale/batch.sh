#!/usr/bin/env bash
# bench/scale/batch.sh: batch repair of ≥ 1M recorded calls, one core, Ray Data and Spark (#32).
#
# One command: builds the toolmend wheel (release, maturin), a venv with the engines pinned by
# crates/toolmend-py/tests-engines/requirements.txt (the same cached venv as .ci/run's engine
# section), the dataset (bench/scale/make_calls.py, from ../shared/bench/make_corpus.py; kept
# between runs in $DATA_DIR), then runs crates/toolmend/examples/batch_engine.rs (the Rust
# engine alone, a reference) and bench/scale/batch.py over it. Not in the default test run;
# needs cargo, Java 17+ and ~2.5 GB of disk (venvs 1.3 GB, data ~0.3 GB). Loopback only.
# Knobs: ROWS (1000000), ROUNDS (2), PHASES (local,ray,spark), OUT_DIR (bench/out/batch-scale),
# DATA_DIR ($OUT_DIR/calls-$ROWS), TOOLMEND_PY_SITE (a folder with toolmend already unpacked:
# skips the wheel build), RUST_ENGINE (1; 0 skips the Rust reference), BATCH_ENGINE_BIN (that
# example already built: skips its build), CARGO_LOCK (a file to hold with flock around builds).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
ROWS="${ROWS:-1000000}"; ROUNDS="${ROUNDS:-2}"; PHASES="${PHASES:-local,ray,spark}"
OUT_DIR="${OUT_DIR:-$ROOT/bench/out/batch-scale}"
DATA_DIR="${DATA_DIR:-$OUT_DIR/calls-$ROWS}"
mkdir -p "$OUT_DIR"

# A cached venv per pinned requirements file, keyed by its hash (as .ci/run's python_env).
venv_for() {
    local requirements="$1" key env
    key="$(python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest()[:12])' "$requirements")"
    env="${XDG_CACHE_HOME:-$HOME/.cache}/toolmend-ci/py-$key"
    if [ ! -f "$env/.ready" ]; then
        mkdir -p "$env"
        python3 -m venv --clear "$env/venv"
        "$env/venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$requirements"
        touch "$env/.ready"
    fi
    echo "$env/venv/bin/python"
}

ENGINES_PY="$(venv_for "$ROOT/crates/toolmend-py/tests-engines/requirements.txt")"
lock=(); [ -n "${CARGO_LOCK:-}" ] && lock=(flock "$CARGO_LOCK")
if [ -z "${TOOLMEND_PY_SITE:-}" ]; then
    BUILD_PY="$(venv_for "$ROOT/crates/toolmend-py/requirements-dev.txt")"
    rm -rf "$OUT_DIR/wheels" "$OUT_DIR/site"
    "${lock[@]}" "$BUILD_PY" -m maturin build --release --locked \
        --manifest-path "$ROOT/crates/toolmend-py/Cargo.toml" --out "$OUT_DIR/wheels"
    "$ENGINES_PY" -m pip install --quiet --disable-pip-version-check --no-deps \
        --target "$OUT_DIR/site" "$OUT_DIR"/wheels/toolmend-*.whl
    TOOLMEND_PY_SITE="$OUT_DIR/site"
fi

if [ ! -f "$DATA_DIR/manifest.json" ]; then
    "$ENGINES_PY" "$HERE/make_calls.py" "$DATA_DIR" --rows "$ROWS"
fi

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
engine=()
if [ "${RUST_ENGINE:-1}" = 1 ] && [[ ",$PHASES," == *,local,* ]]; then
    # The Rust engine alone over the same calls (a reference; copied out of the target dir so a
    # concurrent build cannot swap it).
    if [ -n "${BATCH_ENGINE_BIN:-}" ]; then
        cp "$BATCH_ENGINE_BIN" "$OUT_DIR/batch_engine"
    else
        target="${CARGO_TARGET_DIR:-$ROOT/target}"
        (cd "$ROOT" && "${lock[@]}" cargo build --release --locked -q -p toolmend --example batch_engine)
        cp "$target/release/examples/batch_engine" "$OUT_DIR/batch_engine"
    fi
    "$OUT_DIR/batch_engine" "$DATA_DIR" "$ROUNDS" > "$OUT_DIR/engine-$stamp.json"
    engine=(--engine "$OUT_DIR/engine-$stamp.json")
fi
PYTHONPATH="$TOOLMEND_PY_SITE" "$ENGINES_PY" -W ignore "$HERE/batch.py" "$DATA_DIR" \
    --rounds "$ROUNDS" --phases "$PHASES" --out "$OUT_DIR/results-$stamp.json" "${engine[@]}" \
    2> "$OUT_DIR/engines-$stamp.log" | tee "$OUT_DIR/results-$stamp.txt"
echo "bench/scale/batch.sh: figures in $OUT_DIR/results-$stamp.{txt,json}, engine logs in engines-$stamp.log"
