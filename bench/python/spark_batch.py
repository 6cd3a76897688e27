"""Spark local mode: rows/s of `df.mapInArrow` with toolmend.arrow.repair_calls, 1 and 2 cores.

    python bench/python/spark_batch.py [--rows N] [--rounds R]

N calls (default 1,000,000) are generated inside Spark (`spark.range`, 80% valid, 20% with a
trailing comma or a string-typed number), repaired in `mapInArrow`, and counted by status; the
same job runs on `local[1]` and `local[2]`, rounds alternating. Reference in the same run: the
same job with an identity `mapInArrow` (Spark's own cost of moving the batches to Python and
back). Needs crates/toolmend-py/tests-engines/requirements.txt, Java 17+, and the toolmend
wheel on PYTHONPATH (exported to Spark's Python workers). Loopback only.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from pyspark.sql import SparkSession  # noqa: E402

import toolmend.arrow  # noqa: E402

TOOLS = [{"type": "function", "function": {"name": "read", "parameters": {
    "type": "object", "required": ["path"],
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
    "additionalProperties": False}}}]
SCHEMA = ("name string, arguments string, status string, arguments_repaired string, "
          "repairs array<struct<kind: string, path: string>>, error string")


def repair(batches):
    for batch in batches:
        yield toolmend.arrow.repair_calls(batch, TOOLS)


def identity(batches):
    yield from batches


def job(spark, rows, fn, schema):
    df = spark.range(rows, numPartitions=8).selectExpr(
        "'read' AS name",
        """CASE WHEN id % 10 = 0 THEN concat('{"path": "f', id, '",}')
                WHEN id % 10 = 1 THEN concat('{"path": "f', id, '", "limit": "5"}')
                ELSE concat('{"path": "f', id, '", "limit": 5}') END AS arguments""")
    start = time.perf_counter()
    out = df.mapInArrow(fn, schema)
    counts = dict(out.groupBy("status" if "status" in schema else "name").count().collect())
    return time.perf_counter() - start, counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    results = {}
    for _ in range(args.rounds):
        for cores in (1, 2):
            spark = (SparkSession.builder.master(f"local[{cores}]").appName("toolmend-bench")
                     .config("spark.ui.enabled", "false")
                     .config("spark.sql.shuffle.partitions", str(cores)).getOrCreate())
            spark.sparkContext.setLogLevel("ERROR")
            job(spark, 10_000, repair, SCHEMA)  # warm the workers
            for label, fn, schema in (("identity", identity, "name string, arguments string"),
                                      ("toolmend", repair, SCHEMA)):
                seconds, counts = job(spark, args.rows, fn, schema)
                results.setdefault((label, cores), []).append(args.rows / seconds)
                if label == "toolmend":
                    print(f"local[{cores}] statuses {dict(sorted(counts.items()))}", flush=True)
            spark.stop()
    for (label, cores), rates in sorted(results.items()):
        print(f"{label:9} local[{cores}]  " + ", ".join(f"{r:,.0f}" for r in rates) + " rows/s")
    for label in ("identity", "toolmend"):
        best = {c: max(results[(label, c)]) for c in (1, 2)}
        print(f"{label}: local[2] / local[1] = {best[2] / best[1]:.2f}x")


if __name__ == "__main__":
    main()
