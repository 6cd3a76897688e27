"""Batch repair at scale: rows/s per core in one process, then Ray Data and Spark local mode.

    python bench/scale/batch.py DATA_DIR [--rounds 2] [--phases local,ray,spark] [--out FILE]
                                [--engine ENGINE.json]

DATA_DIR is what bench/scale/make_calls.py wrote (Parquet, JSONL, tools.json). Everything uses
toolmend's public API only, so the same command measures any later implementation. Phases:

- ``local`` (one thread, so rows/s per core): the same calls through a Python loop over
  ``Mender.repair_call`` reading ``.status`` (the reference), the same loop collecting what
  ``repair_calls`` returns (status, text to dispatch, repairs, error) into Arrow columns, through
  ``toolmend.arrow.repair_calls`` over the Parquet file's record batches (columns in and out),
  and through ``Mender.repair_many`` on lists already in Python (the Rust engine plus list
  conversion). With --engine, the line ``examples/batch_engine.rs`` printed (the Rust engine
  alone over the same calls, one thread) is the third reference.
- ``ray``: Ray Data on a local instance with 1 and 2 CPUs, over the Parquet and the JSONL files:
  ``read → map_batches(repair_calls, batch_format="pyarrow") → status counts per batch``, and the
  same pipeline with an identity function (Ray's own cost of reading and moving the batches).
- ``spark``: Spark ``local[1]`` and ``local[2]`` over the same files: ``read →
  mapInArrow(repair_calls) → groupBy(status).count()``, and with an identity ``mapInArrow``.

Rounds alternate the variants; every run must give the same status counts as the loop. The
figures print as a table (rows/s, and ratios against the references of the same run) and, with
--out, as JSON. The two engines start on 127.0.0.1 only (Ray: RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0,
usage stats off; Spark: SPARK_LOCAL_IP). Needs the packages of
crates/toolmend-py/tests-engines/requirements.txt, Java 17+ for Spark, and a release build of
the toolmend wheel on PYTHONPATH (exported to the engines' workers); bench/scale/batch.sh sets
all of that up.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

import toolmend  # noqa: E402
import toolmend.arrow  # noqa: E402

# The engines' Python workers are other processes: they import the same toolmend as this one.
_SITE = os.path.dirname(os.path.dirname(os.path.abspath(toolmend.__file__)))
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_SITE, os.environ.get("PYTHONPATH")) if p)

SPARK_SCHEMA = ("id bigint, name string, arguments string, variant string, status string, "
                "arguments_repaired string, repairs array<struct<kind: string, path: string>>, "
                "error string")
SPARK_INPUT = "id bigint, name string, arguments string, variant string"


def add(counts: Counter, table) -> None:
    for row in table.column("status").value_counts().to_pylist():
        counts[row["values"]] += row["counts"]


# ---- one process, one thread -----------------------------------------------------------------

def local_phase(data: Path, tools, rounds: int, results: dict) -> Counter:
    table = pq.read_table(data / "parquet", columns=["name", "arguments"])
    batches = table.to_batches(max_chunksize=65_536)
    names = table.column("name").to_pylist()
    arguments = table.column("arguments").to_pylist()
    mender = toolmend.Mender(tools)
    toolmend.arrow.repair_calls(batches[0].slice(0, 100), tools)  # compile and cache the tools

    def loop():
        counts = Counter()
        for name, text in zip(names, arguments):
            counts[mender.repair_call(name, text).status] += 1
        return counts

    def loop_columns():
        # The loop that gives what repair_calls gives: the four result columns, as Arrow.
        status, repaired, repairs, errors = [], [], [], []
        for name, text in zip(names, arguments):
            call = mender.repair_call(name, text)
            status.append(call.status)
            repaired.append(call.arguments_text if call.dispatchable else None)
            repairs.append([{"kind": r.kind, "path": r.path} for r in call.repairs])
            errors.append(call.error)
        types = toolmend.arrow.result_schema()
        out = pa.table({"status": pa.array(status, types["status"]),
                        "arguments_repaired": pa.array(repaired, types["arguments_repaired"]),
                        "repairs": pa.array(repairs, types["repairs"]),
                        "error": pa.array(errors, types["error"])})
        counts = Counter()
        add(counts, out)
        return counts

    def arrow():
        counts = Counter()
        for batch in batches:
            add(counts, toolmend.arrow.repair_calls(batch, tools))
        return counts

    def engine():
        return Counter(mender.repair_many(names, arguments)[0])

    runs = {"loop over Mender.repair_call": loop, "loop, the same 4 columns as Arrow": loop_columns,
            "toolmend.arrow.repair_calls": arrow}
    if hasattr(mender, "repair_many"):
        runs["Mender.repair_many (engine + lists)"] = engine
    reference = None
    for _ in range(rounds):
        for label, run in runs.items():
            start = time.perf_counter()
            counts = run()
            record(results, "local", label, 1, len(names) / (time.perf_counter() - start))
            reference = reference or counts
            check(reference, counts, label)
    return reference


# ---- Ray Data --------------------------------------------------------------------------------

def status_counts(batch: pa.Table) -> pa.Table:
    """One small row per status of the batch (what the driver sums), computed in the worker."""
    counts = batch.column("status").value_counts()
    return pa.table({"status": counts.field("values"), "n": counts.field("counts")})


def name_counts(batch: pa.Table) -> pa.Table:
    return pa.table({"status": pa.array(["rows"]), "n": pa.array([batch.num_rows], pa.int64())})


def identity(batch):
    return batch


def ray_phase(data: Path, tools, rounds: int, results: dict, expected: Counter, rows: int) -> None:
    import ray

    for cpus in (1, 2):
        ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False,
                 object_store_memory=1024 * 1024 * 1024, configure_logging=False)
        try:
            ray.data.DataContext.get_current().enable_progress_bars = False
            for fmt in ("parquet", "jsonl"):
                def dataset():
                    if fmt == "parquet":
                        return ray.data.read_parquet(str(data / "parquet"))
                    return ray.data.read_json(str(data / "jsonl"))

                def repair():
                    # The README's recipe, then one small row per status and batch.
                    return dataset().map_batches(
                        toolmend.arrow.repair_calls, batch_format="pyarrow", fn_kwargs={"tools": tools}
                    ).map_batches(status_counts, batch_format="pyarrow")

                def moved():
                    return dataset().map_batches(identity, batch_format="pyarrow").map_batches(
                        name_counts, batch_format="pyarrow")

                # Warm the workers once per format (their start is not the pipeline's rate).
                dataset().limit(1000).map_batches(
                    toolmend.arrow.repair_calls, batch_format="pyarrow", fn_kwargs={"tools": tools}
                ).take_all()
                for _ in range(rounds):
                    for label, build in ((f"Ray {fmt}: identity map_batches", moved),
                                         (f"Ray {fmt}: map_batches(repair_calls)", repair)):
                        start = time.perf_counter()
                        counts = Counter()
                        for row in build().take_all():
                            counts[row["status"]] += row["n"]
                        record(results, "ray", label, cpus, rows / (time.perf_counter() - start))
                        check(expected if "repair" in label else Counter(rows=rows), counts, label)
        finally:
            ray.shutdown()


# ---- Spark -----------------------------------------------------------------------------------

def spark_phase(data: Path, tools, rounds: int, results: dict, expected: Counter, rows: int) -> None:
    from pyspark.sql import SparkSession

    def repair(batches):
        for batch in batches:
            yield toolmend.arrow.repair_calls(batch, tools)

    def moved(batches):
        yield from batches

    for cores in (1, 2):
        spark = (SparkSession.builder.master(f"local[{cores}]").appName("toolmend-batch-scale")
                 .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                 .config("spark.driver.memory", "2g")
                 .config("spark.sql.shuffle.partitions", str(cores)).getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        try:
            for fmt in ("parquet", "jsonl"):
                def frame():
                    if fmt == "parquet":
                        return spark.read.parquet(str(data / "parquet"))
                    return spark.read.schema(SPARK_INPUT).json(str(data / "jsonl"))

                # Warm the Python workers once per session.
                frame().limit(1000).mapInArrow(repair, SPARK_SCHEMA).count()
                for _ in range(rounds):
                    for label, fn, schema, key in (
                        (f"Spark {fmt}: identity mapInArrow", moved, SPARK_INPUT, None),
                        (f"Spark {fmt}: mapInArrow(repair_calls)", repair, SPARK_SCHEMA, "status"),
                    ):
                        start = time.perf_counter()
                        out = frame().mapInArrow(fn, schema)
                        if key:
                            counts = Counter(dict(out.groupBy(key).count().collect()))
                        else:
                            counts = Counter(rows=out.count())
                        record(results, "spark", label, cores, rows / (time.perf_counter() - start))
                        check(expected if key else Counter(rows=rows), counts, label)
        finally:
            spark.stop()


# ---- figures ---------------------------------------------------------------------------------

def record(results: dict, phase: str, label: str, workers: int, rate: float) -> None:
    results.setdefault(phase, {}).setdefault(label, {}).setdefault(str(workers), []).append(rate)
    print(f"  {label:42} {workers} worker(s) {rate:12,.0f} rows/s   load {os.getloadavg()[0]:.1f}",
          flush=True)


def check(expected: Counter, counts: Counter, label: str) -> None:
    if counts != expected:
        sys.exit(f"batch: {label} gave status counts {dict(counts)}, the loop {dict(expected)}")


RUST_ENGINE = "Rust engine alone (examples/batch_engine.rs)"


def summary(results: dict) -> None:
    print("\nmedian rows/s (rounds in brackets); ratios against the references of this run")
    local = results.get("local", {})
    loop = statistics.median(local.get("loop over Mender.repair_call", {}).get("1", [0])) or None
    engine = statistics.median(local.get("Mender.repair_many (engine + lists)", {}).get("1", [0])) or None
    rust = statistics.median(local.get(RUST_ENGINE, {}).get("1", [0])) or None
    for label, by_workers in local.items():
        rate = statistics.median(by_workers["1"])
        ratios = f"{rate / loop:.2f}x the loop" if loop else ""
        if engine:
            ratios += f", {rate / engine:.2f}x repair_many"
        if rust:
            ratios += f", {rate / rust:.2f}x the Rust engine"
        spread = ", ".join(f"{r:,.0f}" for r in by_workers["1"])
        print(f"  one core  {label:42} {rate:12,.0f}  [{spread}]  {ratios}")
    for phase in ("ray", "spark"):
        for label, by_workers in results.get(phase, {}).items():
            medians = {w: statistics.median(r) for w, r in by_workers.items()}
            for workers, rate in sorted(medians.items()):
                spread = ", ".join(f"{r:,.0f}" for r in by_workers[workers])
                print(f"  {workers} worker(s) {label:42} {rate:12,.0f}  [{spread}]")
            if {"1", "2"} <= medians.keys():
                print(f"            {label:42} 2 / 1 workers = {medians['2'] / medians['1']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--phases", default="local,ray,spark")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--engine", type=Path, help="the JSON line examples/batch_engine.rs printed")
    args = parser.parse_args()
    phases = set(args.phases.split(","))
    manifest = json.loads((args.data / "manifest.json").read_text())
    tools = json.loads((args.data / "tools.json").read_text())
    rows = manifest["rows"]
    print(f"batch: {rows:,} calls from {args.data}, toolmend from {os.path.dirname(toolmend.__file__)}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}", flush=True)
    results: dict = {}
    expected = local_phase(args.data, tools, args.rounds, results) if "local" in phases else None
    if expected is None:
        table = pq.read_table(args.data / "parquet", columns=["name", "arguments"])
        expected = Counter()
        for batch in table.to_batches(max_chunksize=65_536):
            add(expected, toolmend.arrow.repair_calls(batch, tools))
    print(f"statuses {dict(sorted(expected.items()))}", flush=True)
    if args.engine:
        rust = json.loads(args.engine.read_text())
        check(expected, Counter(rust["statuses"]), RUST_ENGINE)
        for rate in rust["rounds_rows_per_s"]:
            record(results, "local", RUST_ENGINE, 1, rate)
    if "ray" in phases:
        ray_phase(args.data, tools, args.rounds, results, expected, rows)
    if "spark" in phases:
        spark_phase(args.data, tools, args.rounds, results, expected, rows)
    summary(results)
    if args.out:
        args.out.write_text(json.dumps({"rows": rows, "statuses": expected, "python": platform.python_version(),
                                        "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
