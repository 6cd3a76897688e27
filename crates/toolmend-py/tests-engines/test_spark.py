"""The README's Spark recipe, run for real: `df.mapInArrow` with toolmend.arrow, local[2].

Run by .ci/run's "engine recipes" section (a venv from `requirements.txt` here, the wheel CI
built in TOOLMEND_PY_SITE; see conftest.py), or by hand:
`TOOLMEND_PY_SITE=target/py-ci/site python -m pytest crates/toolmend-py/tests-engines`.
Needs Java 17+.
"""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # loopback only

from pyspark.sql import SparkSession  # noqa: E402

import toolmend.arrow  # noqa: E402

TOOLS = [{"type": "function", "function": {"name": "read", "parameters": {
    "type": "object", "required": ["path"],
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
    "additionalProperties": False}}}]

SCHEMA = ("name string, arguments string, status string, arguments_repaired string, "
          "repairs array<struct<kind: string, path: string>>, error string")


def repair_partitions(batches):
    for batch in batches:
        yield toolmend.arrow.repair_calls(batch, TOOLS)


def test_map_in_arrow_repairs_every_row():
    spark = (SparkSession.builder.master("local[2]").appName("toolmend-test")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
             .getOrCreate())
    try:
        rows = [("read", json.dumps({"path": f"f{i}"})) for i in range(500)]
        rows += [("read", '{"path": "x", "limit": "5",}')] * 300
        rows += [("Read", '{"file": 1, "path": null}')] * 200
        df = spark.createDataFrame(rows, "name string, arguments string").repartition(2)
        out = df.mapInArrow(repair_partitions, SCHEMA)
        counts = dict(out.groupBy("status").count().collect())
        assert counts == {"valid": 500, "repaired": 300, "invalid": 200}
        first = out.filter("status = 'repaired'").first()
        assert json.loads(first["arguments_repaired"]) == {"path": "x", "limit": 5}
        assert first["repairs"]
    finally:
        spark.stop()
