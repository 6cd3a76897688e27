#!/usr/bin/env bash
# Peer comparison for salvage: toolmend vs Python `json_repair` (PyPI) and npm `jsonrepair`, on
# the same make_corpus.py corpus. Peers are installed from their registries into bench/out/peers
# (git-ignored). Prints one table; ratios are peer time / toolmend time (higher = toolmend faster).
#
#   bash bench/peers/run.sh [--quick]      # --quick: small and medium sizes only
#
# Env: MAKE_CORPUS (default ../shared/bench/make_corpus.py beside the repository),
#      PEER_BUDGET_S (seconds per peer and group, default 20: json_repair is quadratic on large
#      inputs, so a group over budget is reported from the cases that finished, marked `~`).
#      CARGO (default `cargo`; e.g. `flock /work/cargo.lock cargo` on a shared machine).
set -euo pipefail
CARGO="${CARGO:-cargo}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/bench/out"
peers="$out/peers"
mkdir -p "$peers"
make_corpus="${MAKE_CORPUS:-$root/../shared/bench/make_corpus.py}"
corpus="$out/corpus.jsonl"
[ -f "$corpus" ] || python3 "$make_corpus" "$corpus"
if [ "${1:-}" = "--quick" ]; then
    grep -v '"large/' "$corpus" > "$out/corpus-quick.jsonl"
    corpus="$out/corpus-quick.jsonl"
fi

if [ ! -x "$peers/venv/bin/python" ]; then
    python3 -m venv "$peers/venv"
    "$peers/venv/bin/pip" install --quiet json_repair
fi
if [ ! -d "$peers/node/node_modules/jsonrepair" ]; then
    npm install --silent --prefix "$peers/node" jsonrepair >/dev/null
fi

(cd "$root" && $CARGO run --quiet --release -p toolmend --example salvage_corpus -- "$corpus" --json --reps 5) > "$peers/toolmend.jsonl"
(cd "$root" && $CARGO run --quiet --release -p toolmend --example salvage_corpus -- "$corpus" --json --reps 5 --jsonrepair-rs) > "$peers/jsonrepair-rs.jsonl"
"$peers/venv/bin/python" "$root/bench/peers/json_repair_py.py" "$corpus" > "$peers/json_repair.jsonl"
NODE_PATH="$peers/node/node_modules" node "$root/bench/peers/jsonrepair_js.js" "$corpus" > "$peers/jsonrepair-npm.jsonl"
python3 "$root/bench/peers/table.py" "$peers/toolmend.jsonl" \
    "jsonrepair-rs=$peers/jsonrepair-rs.jsonl" \
    "json_repair (py)=$peers/json_repair.jsonl" \
    "jsonrepair (npm)=$peers/jsonrepair-npm.jsonl"
