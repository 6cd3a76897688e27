"""The Python side of the crossing (issue #31): median time of one `Mender.repair_call` per
~100 B group of bench/out/corpus.jsonl, timed as examples/small_calls.rs times the Rust call.

Usage: python crossing.py SCHEMA.json CORPUS.jsonl  (the package imported is the one on
sys.path: bench/python/crossing.sh puts a wheel's unpacked site first). Prints JSON lines
{"group": ..., "calls": ..., "ns": ...}.
"""
import json
import sys
import time

import toolmend

ROUNDS = 21
PASSES = 20


def main():
    schema = json.load(open(sys.argv[1]))
    cases = [json.loads(line) for line in open(sys.argv[2])]
    mender = toolmend.Mender(toolmend.ToolSet(schema))
    groups = sorted({c["group"] for c in cases if c["group"].startswith("small/")})
    call = mender.repair_call
    for group in groups:
        inputs = [c["input"] for c in cases if c["group"] == group]
        rounds = []
        for _ in range(ROUNDS):
            start = time.perf_counter_ns()
            for _ in range(PASSES):
                for text in inputs:
                    call("write_file", text)
            rounds.append((time.perf_counter_ns() - start) / (PASSES * len(inputs)))
        rounds.sort()
        print(json.dumps({"group": group, "calls": len(inputs), "ns": rounds[ROUNDS // 2]}))


if __name__ == "__main__":
    main()
