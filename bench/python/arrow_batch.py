"""toolmend.arrow.repair_calls against a Python loop over Mender.repair_call, in one process.

    python bench/python/arrow_batch.py [--rows N] [--batch ROWS] [--rounds R]

Generates N calls (default 1,000,000) of three tools, in the proportions of a real log: most
valid (formatting left as the model wrote it), the rest broken by the mutation kinds toolmend
repairs (trailing comma, string-typed numbers and booleans, renamed fields, a Markdown fence,
single quotes, a cut-off call) or cannot save (a wrong type, a missing field). Then, in
alternating rounds, times over the same rows:

- ``loop``: ``for name, args in rows: mender.repair_call(name, args)`` and reading ``.status``;
- ``arrow``: ``toolmend.arrow.repair_calls(batch, tools)`` over RecordBatches of --batch rows,
  columns in and out included;
- ``engine``: ``Mender.repair_many(names, arguments)`` on lists already in Python (the Rust
  engine plus list conversion, GIL released: the nearest this process gets to the engine alone).

and the loop and ``arrow`` again on two threads (``repair_call`` holds the GIL for small inputs;
``repair_calls`` releases it for the whole batch). Prints rows/s for each and the ratios. Needs
pyarrow and the toolmend wheel (a release build: ``maturin build --release``).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
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
    parser.add_argument("--rounds", type=int, default=2)
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

    def engine():
        statuses = {}
        for status in mender.repair_many(names, arguments)[0]:
            statuses[status] = statuses.get(status, 0) + 1
        return statuses

    runs = (("loop", loop), ("arrow", arrow), ("engine", engine),
            ("loop, 2 threads", loop_2_threads), ("arrow, 2 threads", arrow_2_threads))
    times = {label: [] for label, _ in runs}
    seen = {}
    for _ in range(args.rounds):
        for label, run in runs:
            start = time.perf_counter()
            seen[label] = run()
            times[label].append(time.perf_counter() - start)
    assert all(v == seen["loop"] for v in seen.values()), seen
    print(f"{args.rows:,} calls, statuses {dict(sorted(seen['arrow'].items()))}")
    rate = {k: args.rows / statistics.median(v) for k, v in times.items()}
    for label, value in rate.items():
        spread = ", ".join(f"{args.rows / t:,.0f}" for t in times[label])
        print(f"{label:17} {value:12,.0f} rows/s  (rounds: {spread})")
    print(f"arrow / loop                     {rate['arrow'] / rate['loop']:.2f}x")
    print(f"arrow / engine                   {rate['arrow'] / rate['engine']:.2f}x")
    print(f"arrow, 2 threads / loop          {rate['arrow, 2 threads'] / rate['loop']:.2f}x")
    print(f"loop, 2 threads / loop           {rate['loop, 2 threads'] / rate['loop']:.2f}x")


if __name__ == "__main__":
    main()
