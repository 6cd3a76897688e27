#!/usr/bin/env bash
# The Python crossing (issue #31): `Mender.repair_call` from Python against the same call in
# Rust, on the ~100 B groups of bench/out/corpus.jsonl.
#
# Usage: [REPEAT=N] bash bench/python/crossing.sh SMALL_CALLS_BIN SITE [SITE...]
#   SMALL_CALLS_BIN  the release build of `examples/small_calls` (a copy: the shared target dir
#                    is overwritten by other builds)
#   SITE             a folder holding an unpacked `toolmend` wheel (pip install --no-deps
#                    --target SITE toolmend-*.whl), e.g. one built on main and one on a branch
#   REPEAT           rounds (default 1): each round runs the Rust loop, then every site's Python
#                    loops, and the next round's (or a last) Rust loop closes it. A noisy machine
#                    drifts within seconds, so each ratio is taken against the Rust runs on
#                    either side of it, and the medians over the rounds are printed.
# Prints, per group, the Rust ns per call, then each site's ns per call and its ratio to the Rust
# call, for each of crossing.py's three loops (results dropped, named, kept).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="$1"; shift
repeat="${REPEAT:-1}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
"$bin" --schema > "$tmp/schema.json"
for ((k = 0; k < repeat; k++)); do
    "$bin" > "$tmp/rust.$k.jsonl"
    i=0
    for site in "$@"; do
        PYTHONPATH="$site" python3 bench/python/crossing.py "$tmp/schema.json" bench/out/corpus.jsonl > "$tmp/py.$k.$i.jsonl"
        i=$((i + 1))
    done
done
"$bin" > "$tmp/rust.$repeat.jsonl"
python3 - "$tmp" "$repeat" "$@" <<'PY'
import json, statistics, sys
tmp, repeat, sites = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = lambda p: {d["group"]: d for d in map(json.loads, open(p))}
rust = [rows(f"{tmp}/rust.{k}.jsonl") for k in range(repeat + 1)]
py = [[rows(f"{tmp}/py.{k}.{i}.jsonl") for k in range(repeat)] for i in range(len(sites))]
# The round's reference: the faster of the Rust runs before and after it.
ref = lambda k, g: min(rust[k][g]["ns"], rust[k + 1][g]["ns"])
med = statistics.median
print(f"rounds: {repeat} (medians over the rounds)")
for key in ("ns", "ns_named", "ns_kept"):
    print(f"{key}: Python loop against the Rust call")
    print(f"{'group':<22} {'rust ns':>8}" + "".join(f" {'py ns':>8} {'py/rust':>7}" for _ in sites))
    for g in sorted(rust[0]):
        cells = "".join(
            f" {med(p[k][g][key] for k in range(repeat)):>8.0f}"
            f" {med(p[k][g][key] / ref(k, g) for k in range(repeat)):>7.2f}"
            for p in py
        )
        print(f"{g:<22} {med(ref(k, g) for k in range(repeat)):>8.0f}" + cells)
print("sites:", *sites)
PY
