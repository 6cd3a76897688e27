"""toolmend.arrow.repair_calls over pyarrow batches: the result columns, row by row."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

import toolmend
import toolmend.arrow

ROWS = [
    ("read", '{ "path" : "a.txt" }'),  # valid: the same bytes back
    ("read", '{"path": "b.txt", "limit": "20",}'),  # repaired: trailing comma, string number
    ("Read", '{"file": 1, "path": null}'),  # cannot be saved: invalid, with a retry message
    ("read", None),  # no arguments: judged as empty text, nothing invented
    ("nope", '{"path": "c"}'),  # unknown tool
]


def batch(rows=ROWS, extra=True):
    columns = {"name": [r[0] for r in rows], "arguments": [r[1] for r in rows]}
    if extra:
        columns["turn_id"] = list(range(len(rows)))
    return pa.RecordBatch.from_pydict(columns)


def test_each_row_matches_repair_call(tools):
    out = toolmend.arrow.repair_calls(batch(), tools)
    assert out.schema.names == ["name", "arguments", "turn_id", "status", "arguments_repaired", "repairs", "error"]
    assert out.column("turn_id").to_pylist() == list(range(len(ROWS)))
    mender = toolmend.Mender(tools)
    for i, (name, arguments) in enumerate(ROWS):
        call = mender.repair_call(name, arguments or "")
        row = {k: out.column(k)[i].as_py() for k in ("status", "arguments_repaired", "repairs", "error")}
        assert row["status"] == call.status
        assert row["arguments_repaired"] == (call.arguments_text if call.dispatchable else None)
        assert row["repairs"] == [r.to_dict() for r in call.repairs]
        assert row["error"] == call.error


def test_valid_arguments_come_back_as_the_same_bytes(tools):
    out = toolmend.arrow.repair_calls(batch(), tools)
    assert out.column("status")[0].as_py() == "valid"
    assert out.column("arguments_repaired")[0].as_py() == ROWS[0][1]
    assert out.column("repairs")[0].as_py() == []


def test_broken_rows_are_repaired_or_reported(tools):
    out = toolmend.arrow.repair_calls(batch(), tools)
    assert out.column("status")[1].as_py() == "repaired"
    assert json.loads(out.column("arguments_repaired")[1].as_py()) == {"path": "b.txt", "limit": 20}
    assert {r["kind"] for r in out.column("repairs")[1].as_py()}
    assert out.column("status")[2].as_py() == "invalid"
    assert out.column("arguments_repaired")[2].as_py() is None
    assert out.column("error")[2].as_py()
    assert out.column("status")[3].as_py() != "valid"
    assert out.column("arguments_repaired")[3].as_py() in (None, "{}", "")


def test_tables_give_tables_and_result_types_are_fixed(tools):
    table = pa.Table.from_batches([batch(), batch()])
    out = toolmend.arrow.repair_calls(table, tools)
    assert isinstance(out, pa.Table)
    assert out.num_rows == 2 * len(ROWS)
    for name, kind in toolmend.arrow.result_schema().items():
        assert out.schema.field(name).type == kind
    empty = toolmend.arrow.repair_calls(batch(rows=[]), tools)
    assert empty.num_rows == 0 and empty.schema.field("repairs").type == toolmend.arrow.result_schema()["repairs"]


def test_result_columns_already_there_are_replaced(tools):
    once = toolmend.arrow.repair_calls(batch(), tools)
    twice = toolmend.arrow.repair_calls(once, tools)
    assert twice.schema.names == once.schema.names
    assert twice.column("status").to_pylist() == once.column("status").to_pylist()


def test_one_mender_per_tool_set_is_kept(tools):
    # The menders of one tool set and options share one compiled engine (the library's
    # MenderCache): a call through one counts in the other's stats. JSON text of the same
    # tools is its own key; other options are another engine.
    def calls(mender):
        return mender.stats()["calls"]

    first = toolmend.arrow._mender(tools, {"max_depth": 48})
    again = toolmend.arrow._mender(json.loads(json.dumps(tools)), {"max_depth": 48})
    text = toolmend.arrow._mender(json.dumps(tools), {"max_depth": 48})
    other = toolmend.arrow._mender(tools, {"max_depth": 48, "model": "m"})
    before = [calls(again), calls(text), calls(other)]
    first.repair_call("read", '{"path": "a"}')
    assert [calls(again), calls(text), calls(other)] == [before[0] + 1, before[1], before[2]]
    text.repair_call("read", '{"path": "a"}')
    assert calls(toolmend.arrow._mender(json.dumps(tools), {"max_depth": 48})) == before[1] + 1
    mender = toolmend.Mender(tools)
    assert toolmend.arrow._mender(mender, {}) is mender
    with pytest.raises(TypeError, match="nope"):
        toolmend.arrow._mender(tools, {"nope": 1})
    with pytest.raises(ValueError, match="not JSON"):
        toolmend.arrow._mender("[{not json", {})
    with pytest.raises(toolmend.ToolSpecError):
        toolmend.arrow._mender("42", {})


def test_bad_input_is_a_clear_error(tools):
    with pytest.raises(ValueError, match="'arguments' column"):
        toolmend.arrow.repair_calls(pa.RecordBatch.from_pydict({"name": ["read"]}), tools)
    with pytest.raises(TypeError, match="RecordBatch or Table"):
        toolmend.arrow.repair_calls({"name": ["read"], "arguments": ["{}"]}, tools)


def test_a_tools_column_gives_each_row_its_own_tool_set(tools):
    other = [{"name": "list", "input_schema": {"type": "object", "required": ["dir"],
                                                "properties": {"dir": {"type": "string"}}}}]
    rows = batch(extra=False).append_column("tools", pa.array([json.dumps(tools)] * len(ROWS)))
    same = toolmend.arrow.repair_calls(rows, None)
    assert same.column("status").to_pylist() == toolmend.arrow.repair_calls(batch(extra=False), tools).column("status").to_pylist()
    mixed = pa.RecordBatch.from_pydict({
        "name": ["read", "list", "read"],
        "arguments": ['{"path": "a",}', '{"dir": "/"}', '{"path": "b"}'],
        "tools": [json.dumps(tools), json.dumps(other), json.dumps(tools)],
    })
    out = toolmend.arrow.repair_calls(mixed)
    assert out.column("status").to_pylist() == ["repaired", "valid", "valid"]
    assert out.column("repairs")[1].as_py() == [] and out.column("repairs")[0].as_py()
    with pytest.raises(ValueError, match="tools="):
        toolmend.arrow.repair_calls(batch())
