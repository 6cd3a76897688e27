"""The Python side of the crossing (issue #31): median time of one `Mender.repair_call` per
~100 B group of bench/out/corpus.jsonl, timed as examples/small_calls.rs times the Rust call.

Three loops, as callers write them: `ns` drops each result at once (`call(...)` as a statement,
what the Rust loop does), `ns_named` binds it to a name that the next result replaces
(`c = call(...)`), `ns_kept` keeps every result of a pass in a list (no result is let go of
before the next call; the list is emptied after the pass, outside the timing).

Usage: python crossing.py SCHEMA.json CORPUS.jsonl  (the package imported is the one on
sys.path: bench/python/crossing.sh puts a wheel's unpacked site first). Prints JSON lines
{"group": ..., "calls": ..., "ns": ..., "ns_named": ..., "ns_kept": ...}.
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
        row = {"group": group, "calls": len(inputs)}
        for key, loop in (("ns", dropped), ("ns_named", named), ("ns_kept", kept)):
            rounds = sorted(loop(call, inputs) for _ in range(ROUNDS))
            row[key] = rounds[ROUNDS // 2] / (PASSES * len(inputs))
        print(json.dumps(row))


def dropped(call, inputs):
    start = time.perf_counter_ns()
    for _ in range(PASSES):
        for text in inputs:
            call("write_file", text)
    return time.perf_counter_ns() - start


def named(call, inputs):
    start = time.perf_counter_ns()
    for _ in range(PASSES):
        for text in inputs:
            c = call("write_file", text)
    del c
    return time.perf_counter_ns() - start


def kept(call, inputs):
    total = 0
    for _ in range(PASSES):
        results = []
        keep = results.append
        start = time.perf_counter_ns()
        for text in inputs:
            keep(call("write_file", text))
        total += time.perf_counter_ns() - start
        del results
    return total


if __name__ == "__main__":
    main()
