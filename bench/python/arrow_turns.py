"""toolmend.arrow.run_turns on the corpus turns, repeated: rows/s, and against a previous arrow.py.

    python bench/python/arrow_turns.py [--rows N] [--rounds R] [--previous OLD_ARROW_PY]

Reads every line of the repo's corpus/*.jsonl (the ``toolmend turns`` contract), repeats them
to N rows (default 200,000; each copy gets its own session names, so storms and retry budgets
stay per copy), as JSON text columns in one table, and times ``run_turns`` over it in
alternating rounds (one thread: rows/s per core). With --previous (an ``arrow.py`` from an
older commit, e.g. ``git show 722deb1:crates/toolmend-py/python/toolmend/arrow.py``), the
same rows through that module's ``run_turns`` too, loaded against the installed native
module (it must still export what the old file imports), and the results compared.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import pathlib
import statistics
import sys
import time

import pyarrow as pa

import toolmend.arrow

REPO = pathlib.Path(__file__).resolve().parents[2]
COLUMNS = ("id", "session", "model", "tools", "message", "finish_reason", "new_user_turn", "options")


def table(rows: int) -> pa.Table:
    lines = []
    for path in sorted((REPO / "corpus").glob("*.jsonl")):
        lines += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    columns = {key: [] for key in COLUMNS}
    copy = 0
    while len(columns["message"]) < rows:
        for line in lines[: rows - len(columns["message"])]:
            for key in COLUMNS:
                value = line.get(key)
                if key in ("tools", "message", "options") and value is not None:
                    value = json.dumps(value)
                if key == "session" and value is not None:
                    value = f"{value}#{copy}"
                if key == "id" and value is not None and not isinstance(value, str):
                    value = json.dumps(value)
                columns[key].append(value)
        copy += 1
    return pa.table(columns)


def load_previous(path: str):
    spec = importlib.util.spec_from_file_location("toolmend._previous_arrow", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--previous", help="an older arrow.py to time beside this one")
    args = parser.parse_args()

    rows = table(args.rows)
    runs = [("run_turns", toolmend.arrow.run_turns)]
    if args.previous:
        runs.append(("previous run_turns", load_previous(args.previous).run_turns))
    times = {label: [] for label, _ in runs}
    results = {}
    for _ in range(args.rounds):
        for label, run in runs:
            start = time.perf_counter()
            results[label] = run(rows)
            times[label].append(time.perf_counter() - start)
    first = results["run_turns"]
    for label, out in results.items():
        for key in ("error", "content", "reasoning", "calls", "report"):
            assert out.column(key).to_pylist() == first.column(key).to_pylist(), (label, key)
    calls = sum(len(c) for c in first.column("calls").to_pylist() if c)
    print(f"{rows.num_rows:,} turns, {calls:,} calls; results equal on every path")
    rate = {label: rows.num_rows / statistics.median(t) for label, t in times.items()}
    for label, value in rate.items():
        spread = ", ".join(f"{rows.num_rows / t:,.0f}" for t in times[label])
        print(f"{label:20} {value:12,.0f} turns/s  (rounds: {spread})")
    if args.previous:
        print(f"run_turns / previous  {rate['run_turns'] / rate['previous run_turns']:.2f}x")


if __name__ == "__main__":
    main()
