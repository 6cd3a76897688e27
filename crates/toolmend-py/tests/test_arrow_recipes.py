"""The README's one-machine recipes for toolmend.arrow: Polars and DuckDB, run for real."""

from __future__ import annotations

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

import toolmend.arrow

CALLS = {
    "name": ["read", "read", "Read"],
    "arguments": ['{"path": "a"}', '{"path": "b", "limit": "3",}', '{"file": 1, "path": null}'],
}


def test_polars_map_batches_over_a_lazy_frame(tools):
    lazy = pl.LazyFrame(CALLS)
    out = lazy.map_batches(
        lambda df: pl.from_arrow(toolmend.arrow.repair_calls(df.to_arrow(), tools)),
        validate_output_schema=False,
        streamable=True,
    ).collect()
    assert out["status"].to_list() == ["valid", "repaired", "invalid"]
    assert out["arguments_repaired"][0] == '{"path": "a"}'
    assert out.filter(pl.col("status") == "repaired")["repairs"].list.len()[0] >= 1


def test_duckdb_query_to_arrow_and_back(tools, tmp_path):
    path = tmp_path / "calls.parquet"
    pq.write_table(pa.table(CALLS), path)
    con = duckdb.connect()
    calls = con.sql(f"SELECT name, arguments FROM read_parquet('{path}')").to_arrow_table()
    repaired = toolmend.arrow.repair_calls(calls, tools)
    by_status = con.sql(
        "SELECT status, count(*) AS n FROM repaired GROUP BY status ORDER BY status"
    ).fetchall()
    assert by_status == [("invalid", 1), ("repaired", 1), ("valid", 1)]
    kinds = con.sql(
        "SELECT DISTINCT r.kind FROM (SELECT unnest(repairs) AS r FROM repaired) ORDER BY 1"
    ).fetchall()
    assert kinds
