"""toolmend.arrow.repair_calls against a Python loop over Mender.repair_call and the Rust engine alone.

    python bench/python/arrow_batch.py [--rows N] [--batch ROWS] [--rounds R] [--engine-bin PATH]

Generates N calls (default 1,000,000) of three tools, in the proportions of a real log: most
valid (formatting left as the model wrote it), the rest broken by the mutation kinds toolmend
repairs (trailing comma, string-typed numbers and booleans, renamed fields, a Markdown fence,
single quotes, a cut-off call) or cannot save (a wrong type, a missing field). Then, in
alternating rounds, times over the same rows, one thread each (rows/s per core):

- ``loop``: ``for name, args in rows: mender.repair_call(name, args)`` reading ``.status``
  only (the cheapest Python loop: the reference of the issue's goal);
- ``loop, same columns``: the loop that gives what ``repair_calls`` gives (``status``,
  ``arguments_repaired``, ``repairs``, ``error`` read per call, built into a pyarrow table);
- ``arrow``: ``toolmend.arrow.repair_calls(batch, tools)`` over RecordBatches of --batch rows,
  columns in and out through the Arrow C data interface;
- ``lists``: ``Mender.repair_many`` on Python lists (the path of the previous version);
- ``engine``: with --engine-bin (``examples/call_loop.rs``, release), the Rust engine alone: a
  Rust loop of ``Mender::repair_call`` over the same calls, in its own process, timed between
  the Python rounds.

and the loop and ``arrow`` again on two threads. Prints rows/s for each and the ratios. Needs
pyarrow and the toolmend wheel (a release build: ``maturin build --release``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa

import toolmend
import toolmend.arrow

TOOLS = [
    {"type": "function", "function": {"name": "read_file", "parameters": {
        "type": "object", "required": ["path"],
        "properties": {"path": {"type": "string"}, "offset": {"type": "integer"},
                       "limit": {"type": "integer"}}, "additionalProperties": False}}},
    {"type": "function", "function": {"name": "search", "parameters": {
        "type": "object", "required": ["query"],
        "properties": {"query": {"type": "string"}, "max_results": {"type": "integer"},
                       "regex": {"type": "boolean"}, "paths": {"type": "array", "items": {"type": "string"}}}}}},
    {"type": "function", "function": {"name": "edit", "parameters": {
        "type": "object", "required": ["path", "old", "new"],
        "properties": {"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"},
                       "replace_all": {"type": "boolean"}}}}},
]


def valid(rng: random.Random):
    kind = rng.randrange(3)
    if kind == 0:
        return "read_file", {"path": f"src/mod_{rng.randrange(500)}.rs", "offset": rng.randrange(100), "limit": 50}
    if kind == 1:
        return "search", {"query": f"fn handler_{rng.randrange(1000)}", "max_results": 20, "regex": False,
                          "paths": ["src", "tests"]}
    return "edit", {"path": f"lib/{rng.randrange(90)}.py", "old": "x = 1\n", "new": "x = 2\n"}


def mutate(name: str, args: dict, rng: random.Random) -> str:
    text = json.dumps(args)
    kind = rng.randrange(9)
    if kind == 0:
        return text[:-1] + ",}"
    if kind == 1:
        return json.dumps({k: (str(v) if isinstance(v, (int, bool)) else v) for k, v in args.items()})
    if kind == 2:
        renamed = dict(args)
        renamed["file_path" if "path" in renamed else "q"] = renamed.pop("path", renamed.pop("query", ""))
        return json.dumps(renamed)
    if kind == 3:
        return "```json\n" + text + "\n```"
    if kind == 4:
        return text.replace('"', "'")
    if kind == 5:
        return text[: max(1, len(text) * 2 // 3)]
    if kind == 6:
        broken = dict(args)
        broken[next(iter(broken))] = [1, 2]
        return json.dumps(broken)
    if kind == 7:
        return json.dumps({k: v for k, v in list(args.items())[1:]})
    return json.dumps(args, indent=2)


def generate(rows: int, seed: int = 7):
    rng = random.Random(seed)
    names, arguments = [], []
    for _ in range(rows):
        name, args = valid(rng)
        names.append(name)
        arguments.append(json.dumps(args) if rng.random() < 0.7 else mutate(name, args, rng))
    return names, arguments


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=65_536)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--engine-bin", help="examples/call_loop built --release: the Rust engine alone")
    args = parser.parse_args()

    names, arguments = generate(args.rows)
    table = pa.table({"name": names, "arguments": arguments})
    batches = table.to_batches(max_chunksize=args.batch)
    mender = toolmend.Mender(TOOLS)
    toolmend.arrow.repair_calls(batches[0].slice(0, 100), TOOLS)  # compile and cache the tools

    def loop():
        statuses = {}
        for name, text in zip(names, arguments):
            status = mender.repair_call(name, text).status
            statuses[status] = statuses.get(status, 0) + 1
        return statuses

    def loop_same_columns():
        status, repaired, repairs, error = [], [], [], []
        for name, text in zip(names, arguments):
            call = mender.repair_call(name, text)
            status.append(call.status)
            repaired.append(call.arguments_text if call.dispatchable else None)
            repairs.append([{"kind": r.kind, "path": r.path} for r in call.repairs])
            error.append(call.error)
        types = toolmend.arrow.result_schema()
        out = pa.table({"status": pa.array(status, types["status"]),
                        "arguments_repaired": pa.array(repaired, types["arguments_repaired"]),
                        "repairs": pa.array(repairs, types["repairs"]),
                        "error": pa.array(error, types["error"])})
        statuses = {}
        for row in out.column("status").value_counts().to_pylist():
            statuses[row["values"]] = row["counts"]
        return statuses

    def lists():
        statuses = {}
        for status in mender.repair_many(names, arguments)[0]:
            statuses[status] = statuses.get(status, 0) + 1
        return statuses

    def arrow():
        statuses = {}
        for batch in batches:
            out = toolmend.arrow.repair_calls(batch, TOOLS)
            for row in out.column("status").value_counts().to_pylist():
                statuses[row["values"]] = statuses.get(row["values"], 0) + row["counts"]
        return statuses

    pool = ThreadPoolExecutor(2)

    def arrow_2_threads():
        statuses = {}
        for out in pool.map(lambda b: toolmend.arrow.repair_calls(b, TOOLS), batches):
            for row in out.column("status").value_counts().to_pylist():
                statuses[row["values"]] = statuses.get(row["values"], 0) + row["counts"]
        return statuses

    def loop_2_threads():
        def part(lo, hi):
            return [mender.repair_call(n, a).status for n, a in zip(names[lo:hi], arguments[lo:hi])]

        half = len(names) // 2
        statuses = {}
        for part_statuses in pool.map(part, (0, half), (half, len(names))):
            for status in part_statuses:
                statuses[status] = statuses.get(status, 0) + 1
        return statuses

    workdir = tempfile.mkdtemp(prefix="arrow_batch_")
    tools_path, calls_path = os.path.join(workdir, "tools.json"), os.path.join(workdir, "calls.jsonl")
    if args.engine_bin:
        with open(tools_path, "w") as f:
            json.dump(TOOLS, f)
        with open(calls_path, "w") as f:
            for pair in zip(names, arguments):
                f.write(json.dumps(pair) + "\n")
    engine_seconds = []

    def engine():
        # One round in its own process (the Rust loop times itself; reading the file is not timed).
        done = subprocess.run([args.engine_bin, tools_path, calls_path, "1"], check=True,
                              capture_output=True, text=True)
        result = json.loads(done.stdout)
        assert result["rows"] == len(names), result
        engine_seconds.append(result["seconds"][0])
        return result["statuses"]

    runs = [("loop", loop), ("loop, same columns", loop_same_columns), ("arrow", arrow), ("lists", lists),
            ("loop, 2 threads", loop_2_threads), ("arrow, 2 threads", arrow_2_threads)]
    if args.engine_bin:
        runs.insert(0, ("engine", engine))
    times = {label: [] for label, _ in runs}
    seen = {}
    for _ in range(args.rounds):
        for label, run in runs:
            start = time.perf_counter()
            seen[label] = run()
            times[label].append(time.perf_counter() - start)
    if args.engine_bin:
        times["engine"] = engine_seconds
    assert all(v == seen["loop"] for v in seen.values()), seen
    print(f"{args.rows:,} calls, statuses {dict(sorted(seen['arrow'].items()))}")
    rate = {k: args.rows / statistics.median(v) for k, v in times.items()}
    for label, value in rate.items():
        spread = ", ".join(f"{args.rows / t:,.0f}" for t in times[label])
        print(f"{label:17} {value:12,.0f} rows/s  (rounds: {spread})")
    print(f"arrow / loop (rows/s)              {rate['arrow'] / rate['loop']:.2f}x   (goal >= 5)")
    print(f"arrow / loop, same columns         {rate['arrow'] / rate['loop, same columns']:.2f}x")
    print(f"arrow / lists (previous version)   {rate['arrow'] / rate['lists']:.2f}x")
    if args.engine_bin:
        print(f"arrow time / engine time           {rate['engine'] / rate['arrow']:.2f}x   (goal <= 1.5)")
        print(f"loop time / engine time            {rate['engine'] / rate['loop']:.2f}x")
    print(f"arrow, 2 threads / arrow           {rate['arrow, 2 threads'] / rate['arrow']:.2f}x")
    print(f"loop, 2 threads / loop             {rate['loop, 2 threads'] / rate['loop']:.2f}x")


if __name__ == "__main__":
    main()
