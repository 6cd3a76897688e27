"""The drop-in on ~100 B calls (issue #31): `toolmend.loads` and `toolmend.repair_json` against
`fast_json_repair`'s, per small group of a `make_corpus.py` corpus, in one process.

    python bench/python/dropin_small.py [CORPUS.jsonl] [--rounds N] [--passes N]

For each group and function pair it prints the median ns per call over `--rounds` rounds
(each round: `--passes` passes over the group's inputs; the two implementations take turns
round by round, so a change in the machine's load hits both alike) and the ratio toolmend ÷
fast_json_repair. `repair_json` is called with its defaults (`return_objects=False`: JSON
text back). Needs `toolmend` and `fast_json_repair` importable (bench/python/requirements.txt);
the `toolmend` imported is the first on sys.path (PYTHONPATH=SITE for an unpacked wheel).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict

import fast_json_repair

import toolmend

PAIRS = {
    "loads": (toolmend.loads, fast_json_repair.loads),
    "repair_json": (toolmend.repair_json, fast_json_repair.repair_json),
}


def round_ns(fn, inputs: list, passes: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(passes):
        for text in inputs:
            fn(text)
    return (time.perf_counter_ns() - start) / (passes * len(inputs))


def median(xs: list) -> float:
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?", default="bench/out/corpus.jsonl")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--passes", type=int, default=10)
    args = ap.parse_args()
    groups: dict = defaultdict(list)
    for line in open(args.corpus, encoding="utf-8"):
        case = json.loads(line)
        if case["group"].startswith("small/"):
            groups[case["group"].split("/", 1)[1]].append(case["input"])
    print(f"python {sys.version.split()[0]}; toolmend from {toolmend.__file__}")
    print(f"{'group':<16} {'function':<12} {'toolmend ns':>11} {'fjr ns':>8} {'ratio':>6}")
    totals = {name: [0.0, 0.0] for name in PAIRS}
    malformed = sum(g != "valid" for g in groups)
    for group in sorted(groups):
        inputs = groups[group]
        for name, (ours, theirs) in PAIRS.items():
            a, b = [], []
            for _ in range(args.rounds):
                a.append(round_ns(ours, inputs, args.passes))
                b.append(round_ns(theirs, inputs, args.passes))
            ma, mb = median(a), median(b)
            if group != "valid":
                totals[name][0] += ma
                totals[name][1] += mb
            print(f"{group:<16} {name:<12} {ma:>11.0f} {mb:>8.0f} {ma / mb:>6.2f}")
        sys.stdout.flush()
    for name, (ta, tb) in totals.items():
        print(f"{'malformed mean':<16} {name:<12} {ta / malformed:>11.0f} {tb / malformed:>8.0f} {ta / tb:>6.2f}")


if __name__ == "__main__":
    main()
