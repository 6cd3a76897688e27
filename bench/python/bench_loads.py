"""toolmend.loads vs json_repair.loads vs fast_json_repair.loads vs json.loads, in one process.

    python bench/python/bench_loads.py [CORPUS.jsonl] [--budget SECONDS] [--markdown]

CORPUS is a `make_corpus.py` corpus (default: generated with ../shared/bench/make_corpus.py
beside the repository into a temporary file). For each size (small ~100 B, medium ~2 KB,
large ~200 KB) and implementation it prints: µs per call (small) or MB/s (medium, large) over
all variants, the share of exact answers (value == the intended arguments, over inputs that
have one), and the same time on the `valid` variant alone with its ratio to `json.loads`.

Each implementation gets at most --budget seconds per size and variant (json_repair takes
seconds per large malformed call); a `~` marks a figure from the cases that finished. Needs
`toolmend`, `json_repair` and `fast_json_repair` installed (bench/python/requirements.txt).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import fast_json_repair
import json_repair

import toolmend

IMPLS = {
    "toolmend": toolmend.loads,
    "fast_json_repair": fast_json_repair.loads,
    "json_repair": json_repair.loads,
    "json": json.loads,
}
SIZES = ("small", "medium", "large")
# Repetitions per input so that small calls are timed over many runs.
REPS = {"small": 200, "medium": 20, "large": 2}


def load_corpus(path: Path) -> dict:
    groups: dict = defaultdict(list)
    for line in path.open(encoding="utf-8"):
        case = json.loads(line)
        groups[case["group"]].append(case)
    return groups


def run_group(fn, cases, reps: int, budget: float) -> dict:
    """Times `fn` over `cases`; correctness from one call per case."""
    spent = 0.0
    nbytes = calls = exact = judged = done = 0
    for case in cases:
        text = case["input"]
        start = time.perf_counter()
        for _ in range(reps):
            try:
                value = fn(text)
            except Exception:  # json.loads on malformed input; counted as no answer
                value = None
        spent += time.perf_counter() - start
        calls += reps
        nbytes += reps * len(text.encode("utf-8"))
        done += 1
        if "expect" in case:
            judged += 1
            exact += value == case["expect"]
        if spent > budget:
            break
    return {
        "s": spent,
        "calls": calls,
        "bytes": nbytes,
        "exact": exact,
        "judged": judged,
        "partial": done < len(cases),
    }


def merge(parts: list) -> dict:
    out = {"s": 0.0, "calls": 0, "bytes": 0, "exact": 0, "judged": 0, "partial": False}
    for p in parts:
        for k in ("s", "calls", "bytes", "exact", "judged"):
            out[k] += p[k]
        out["partial"] |= p["partial"]
    return out


def speed(size: str, r: dict) -> str:
    mark = "~" if r["partial"] else ""
    if r["calls"] == 0 or r["s"] == 0:
        return "n/a"
    if size == "small":
        return f"{mark}{r['s'] / r['calls'] * 1e6:.2f} µs"
    return f"{mark}{r['bytes'] / r['s'] / 1e6:.0f} MB/s"


def per_call(r: dict) -> float:
    return r["s"] / r["calls"] if r["calls"] else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?")
    ap.add_argument("--budget", type=float, default=5.0, help="seconds per implementation, size and variant")
    args = ap.parse_args()

    if args.corpus:
        corpus = Path(args.corpus)
    else:
        root = Path(__file__).resolve().parents[2]
        maker = Path(os.environ.get("MAKE_CORPUS", root.parent / "shared" / "bench" / "make_corpus.py"))
        corpus = Path(tempfile.mkdtemp()) / "corpus.jsonl"
        subprocess.run([sys.executable, str(maker), str(corpus)], check=True)
    groups = load_corpus(corpus)

    print(f"python {sys.version.split()[0]}; toolmend {toolmend.__version__}, "
          f"json_repair {getattr(json_repair, '__version__', '?')}, "
          f"fast_json_repair {getattr(fast_json_repair, '__version__', '?')}; corpus {corpus}")
    print()
    print("| size | implementation | all variants | exact % | valid only | × json.loads (valid) |")
    print("|---|---|---:|---:|---:|---:|")
    for size in SIZES:
        names = sorted(g for g in groups if g.startswith(size + "/"))
        results = {}
        for impl, fn in IMPLS.items():
            parts = {g: run_group(fn, groups[g], REPS[size], args.budget) for g in names}
            results[impl] = (merge(list(parts.values())), parts.get(f"{size}/valid"))
        ref_valid = per_call(results["json"][1]) if results["json"][1] else float("nan")
        for impl, (whole, valid) in results.items():
            exact = f"{100 * whole['exact'] / whole['judged']:.1f}" if whole["judged"] else "n/a"
            ratio = f"{per_call(valid) / ref_valid:.2f}" if valid else "n/a"
            print(f"| {size} | {impl} | {speed(size, whole)} | {exact} | "
                  f"{speed(size, valid) if valid else 'n/a'} | {ratio} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
