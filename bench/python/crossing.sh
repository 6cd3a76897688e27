#!/usr/bin/env bash
# The Python crossing (issue #31): `Mender.repair_call` from Python against the same call in
# Rust, on the ~100 B groups of bench/out/corpus.jsonl, in one run.
#
# Usage: bash bench/python/crossing.sh SMALL_CALLS_BIN SITE [SITE...]
#   SMALL_CALLS_BIN  the release build of `examples/small_calls` (a copy: the shared target dir
#                    is overwritten by other builds)
#   SITE             a folder holding an unpacked `toolmend` wheel (pip install --no-deps
#                    --target SITE toolmend-*.whl), e.g. one built on main and one on a branch
# Prints, per group, the Rust ns per call (best of a run before and a run after the Python
# ones), then each site's ns per call and its ratio to the Rust call.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="$1"; shift
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
"$bin" --schema > "$tmp/schema.json"
"$bin" > "$tmp/rust.0.jsonl"
i=0
for site in "$@"; do
    PYTHONPATH="$site" python3 bench/python/crossing.py "$tmp/schema.json" bench/out/corpus.jsonl > "$tmp/py.$i.jsonl"
    i=$((i + 1))
done
"$bin" > "$tmp/rust.1.jsonl"
python3 - "$tmp" "$@" <<'PY'
import json, sys
tmp, sites = sys.argv[1], sys.argv[2:]
load = lambda p: {d["group"]: d["ns"] for d in map(json.loads, open(p))}
rust = [load(f"{tmp}/rust.{k}.jsonl") for k in (0, 1)]
py = [load(f"{tmp}/py.{i}.jsonl") for i in range(len(sites))]
head = f"{'group':<22} {'rust ns':>8}" + "".join(f" {'py ns':>8} {'py/rust':>7}" for _ in sites)
print(head)
for g in sorted(rust[0]):
    r = min(rust[0][g], rust[1][g])
    print(f"{g:<22} {r:>8.0f}" + "".join(f" {p[g]:>8.0f} {p[g] / r:>7.2f}" for p in py))
print("sites:", *sites)
PY
