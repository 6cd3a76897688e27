"""The README's Ray Data recipe, run for real: `ds.map_batches(toolmend.arrow.repair_calls, ...)`.

A local Ray instance (2 CPUs, loopback, no dashboard, usage stats off) reads a Parquet and a JSONL
dataset of recorded calls written here, repairs them in Ray's worker processes with
`batch_format="pyarrow"`, and every row is checked: valid calls keep their bytes, repairable
ones come back repaired, the rest invalid with a retry message and nothing to dispatch. Run by
.ci/run's "engine recipes" section with the wheel CI built (TOOLMEND_PY_SITE, see conftest.py).
"""

from __future__ import annotations

import json
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # no report to the network
# A single-node Ray on 127.0.0.1 (Ray otherwise binds and talks on the machine's own address).
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
import ray  # noqa: E402

import toolmend.arrow  # noqa: E402

TOOLS = [{"type": "function", "function": {"name": "read", "parameters": {
    "type": "object", "required": ["path"],
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
    "additionalProperties": False}}}]


def calls(count: int = 900):
    """`count` rows in three kinds, in turn: valid (odd spacing kept), repairable, not savable."""
    rows = []
    for i in range(count):
        kind = i % 3
        if kind == 0:
            arguments = '{ "path" :"f%d",  "limit": %d }' % (i, i)
        elif kind == 1:
            arguments = '{"path": "f%d", "limit": "%d",}' % (i, i)
        else:
            arguments = '{"file": %d, "path": null}' % i
        rows.append({"id": i, "name": "read", "arguments": arguments})
    return rows


def check(table: pa.Table, rows) -> None:
    assert table.num_rows == len(rows)
    by_id = {r["id"]: r for r in table.to_pylist()}
    for row in rows:
        out = by_id[row["id"]]
        assert out["name"] == row["name"] and out["arguments"] == row["arguments"]
        kind = row["id"] % 3
        if kind == 0:
            assert out["status"] == "valid"
            assert out["arguments_repaired"] == row["arguments"]  # the same bytes
            assert out["repairs"] == [] and out["error"] is None
        elif kind == 1:
            assert out["status"] == "repaired"
            assert json.loads(out["arguments_repaired"]) == {"path": f"f{row['id']}", "limit": row["id"]}
            assert [(r["kind"], r["path"]) for r in out["repairs"]] == [
                ("trailing_comma_removed", ""), ("scalar_coerced", "/limit")]
        else:
            assert out["status"] == "invalid"
            assert out["arguments_repaired"] is None and out["error"]


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=256 * 1024 * 1024,
             log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def repaired_table(ds) -> pa.Table:
    out = ds.map_batches(toolmend.arrow.repair_calls, batch_format="pyarrow",
                         fn_kwargs={"tools": TOOLS})
    return pa.concat_tables(ray.get(out.to_arrow_refs()))


def test_map_batches_over_parquet(local_ray, tmp_path):
    rows = calls()
    table = pa.Table.from_pylist(rows)
    for part in range(3):  # three files: three read tasks, spread over the workers
        pq.write_table(table.slice(part * 300, 300), tmp_path / f"part-{part}.parquet")
    check(repaired_table(ray.data.read_parquet(str(tmp_path))), rows)


def test_map_batches_over_jsonl(local_ray, tmp_path):
    rows = calls()
    for part in range(3):
        with open(tmp_path / f"part-{part}.jsonl", "w", encoding="utf-8") as f:
            for row in rows[part * 300:(part + 1) * 300]:
                f.write(json.dumps(row) + "\n")
    check(repaired_table(ray.data.read_json(str(tmp_path))), rows)


def test_map_batches_with_a_tools_column(local_ray, tmp_path):
    """Rows that carry their own tool set (JSON text), as a log of several agents would."""
    rows = calls(300)
    for row in rows:
        row["tools"] = json.dumps(TOOLS)
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "calls.parquet")
    out = ray.data.read_parquet(str(tmp_path)).map_batches(
        toolmend.arrow.repair_calls, batch_format="pyarrow")
    check(pa.concat_tables(ray.get(out.to_arrow_refs())), rows)


def test_workers_import_the_wheel_under_test_on_loopback(local_ray):
    """The repair runs in Ray's worker processes, with the toolmend this test imported."""

    @ray.remote
    def where():
        import toolmend

        return os.getpid(), toolmend.__file__

    pid, path = ray.get(where.remote())
    assert pid != os.getpid()
    assert path == toolmend.__file__, (path, toolmend.__file__, sys.path[:3])
    assert ray.util.get_node_ip_address() == "127.0.0.1"
