"""toolmend.loads vs json_repair.loads vs fast_json_repair.loads vs json.loads, in one process.

    python bench/python/bench_loads.py [CORPUS.jsonl] [--budget SECONDS] [--peer-budget SECONDS]

CORPUS is a `make_corpus.py` corpus (default: generated with ../shared/bench/make_corpus.py
beside the repository into a temporary file). For each size (small ~100 B, medium ~2 KB,
large ~200 KB) and implementation it prints: µs per call (small) or MB/s (medium, large) over
all variants, the share of exact answers (value == the intended arguments, over inputs that
have one), and the same time on the `valid` variant alone with its ratio to `json.loads`.

Time limits, so that every size is reported: each implementation gets at most --budget
seconds per size and variant (checked after every call, so a variant costs at most one call
over it), and at most --peer-budget seconds per size over all variants; json_repair (pure
Python, 5-27 s per 200 KB malformed call) is timed on one call per large variant at most. A
`~` marks a figure from the calls that finished, and the output lists the variants each
implementation was timed on when that is not all of them. Needs `toolmend`, `json_repair` and
`fast_json_repair` installed (bench/python/requirements.txt).
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
from importlib.metadata import version
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
# The slow peer's cap on large inputs: cases per variant and repetitions.
SLOW = {"json_repair": {"large": (1, 1)}}


def load_corpus(path: Path) -> dict:
    groups: dict = defaultdict(list)
    for line in path.open(encoding="utf-8"):
        case = json.loads(line)
        groups[case["group"]].append(case)
    return groups


def new_stats() -> dict:
    return {"s": 0.0, "calls": 0, "bytes": 0, "exact": 0, "judged": 0, "partial": False}


def time_case(fn, case: dict, reps: int, st: dict, budget: float) -> None:
    """Calls `fn` on one case `reps` times into `st`; correctness from the last call. Stops
    once `st` has spent `budget` (checked after every call)."""
    text = case["input"]
    size = len(text.encode("utf-8"))
    value = None
    for _ in range(reps):
        start = time.perf_counter()
        try:
            value = fn(text)
        except Exception:  # json.loads on malformed input; counted as no answer
            value = None
        st["s"] += time.perf_counter() - start
        st["calls"] += 1
        st["bytes"] += size
        if st["s"] > budget:
            break
    if "expect" in case:
        st["judged"] += 1
        st["exact"] += value == case["expect"]


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
    rate = r["bytes"] / r["s"] / 1e6
    return f"{mark}{rate:.0f} MB/s" if rate >= 10 else f"{mark}{rate:.2g} MB/s"


def per_call(r: dict) -> float:
    return r["s"] / r["calls"] if r["calls"] else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?")
    ap.add_argument("--budget", type=float, default=5.0, help="seconds per implementation, size and variant")
    ap.add_argument("--peer-budget", type=float, default=60.0, help="seconds per implementation and size")
    args = ap.parse_args()

    if args.corpus:
        corpus = Path(args.corpus)
    else:
        root = Path(__file__).resolve().parents[2]
        maker = Path(os.environ.get("MAKE_CORPUS", root.parent / "shared" / "bench" / "make_corpus.py"))
        corpus = Path(tempfile.mkdtemp()) / "corpus.jsonl"
        subprocess.run([sys.executable, str(maker), str(corpus)], check=True)
    groups = load_corpus(corpus)

    versions = ", ".join(f"{name} {version(name)}" for name in ("json_repair", "fast_json_repair", "orjson"))
    print(f"python {sys.version.split()[0]}; toolmend {toolmend.__version__}, {versions}; corpus {corpus}")
    print()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    print("| size | implementation | all variants | exact % | valid only | × json.loads (valid) |")
    print("|---|---|---:|---:|---:|---:|")
    notes = []
    for size in SIZES:
        # The valid variant first: its ratio to json.loads is reported even when a peer's
        # budget runs out on the malformed ones.
        names = sorted((g for g in groups if g.startswith(size + "/")), key=lambda g: (not g.endswith("/valid"), g))
        # Interleaved: each case goes through every implementation before the next, so a
        # change in the machine's load hits all of them alike.
        stats = {impl: {g: new_stats() for g in names} for impl in IMPLS}
        spent = dict.fromkeys(IMPLS, 0.0)
        for g in names:
            for index, case in enumerate(groups[g]):
                for impl, fn in IMPLS.items():
                    cases_cap, reps = SLOW.get(impl, {}).get(size, (None, REPS[size]))
                    st = stats[impl][g]
                    over = st["s"] > args.budget or spent[impl] > args.peer_budget
                    if over or (cases_cap is not None and index >= cases_cap):
                        st["partial"] = True
                        continue
                    before = st["s"]
                    time_case(fn, case, reps, st, args.budget)
                    spent[impl] += st["s"] - before
        results = {}
        for impl in IMPLS:
            parts = stats[impl]
            timed = [g.split("/")[1] for g, p in parts.items() if p["calls"]]
            cases_cap, reps = SLOW.get(impl, {}).get(size, (None, REPS[size]))
            if len(timed) < len(names) or any(p["partial"] for p in parts.values()):
                cap = f"{cases_cap} case(s) x {reps} call(s) per variant; " if cases_cap is not None else ""
                notes.append(f"{size}, {impl}: {cap}timed on {', '.join(timed) or 'nothing'} "
                             f"({len(timed)} of {len(names)} variants, {spent[impl]:.1f} s)")
            results[impl] = (merge(list(parts.values())), parts.get(f"{size}/valid"))
        ref_valid = per_call(results["json"][1]) if results["json"][1] else float("nan")
        for impl, (whole, valid) in results.items():
            exact = f"{100 * whole['exact'] / whole['judged']:.1f}" if whole["judged"] else "n/a"
            ratio = f"{per_call(valid) / ref_valid:.2f}" if valid else "n/a"
            print(f"| {size} | {impl} | {speed(size, whole)} | {exact} | "
                  f"{speed(size, valid) if valid else 'n/a'} | {ratio} |")
        sys.stdout.flush()
    print()
    for note in notes:
        print(f"- {note}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
