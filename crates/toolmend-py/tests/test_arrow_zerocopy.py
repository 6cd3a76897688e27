"""toolmend.arrow.repair_calls through the Arrow C data interface: layouts, nulls, bad rows, engines."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

import toolmend
import toolmend.arrow
from toolmend._toolmend import repair_call_columns

NAMES = ["read", "read", "Read", "read", "nope", None, "read"]
ARGUMENTS = [
    '{ "path" : "a.txt" }',  # valid, inline in a string_view (<= 12 bytes is not; this is longer)
    '{"path": "b.txt", "limit": "20",}',  # repaired
    '{"file": 1, "path": null}',  # invalid
    None,  # null arguments: judged as empty text
    '{"path": "c"}',  # unknown tool
    '{"path": "d"}',  # null name
    '{"path":"x"}',  # valid, exactly 12 bytes: inline in a string_view
]
RESULTS = ("status", "arguments_repaired", "repairs", "error")


def rows_of(out):
    return [{k: out.column(k)[i].as_py() for k in RESULTS} for i in range(out.num_rows)]


def expected(tools):
    mender = toolmend.Mender(tools)
    rows = []
    for name, arguments in zip(NAMES, ARGUMENTS):
        call = mender.repair_call(name or "", arguments or "")
        rows.append({
            "status": call.status,
            "arguments_repaired": call.arguments_text if call.dispatchable else None,
            "repairs": [r.to_dict() for r in call.repairs],
            "error": call.error,
        })
    return rows


@pytest.mark.parametrize("text", [pa.string(), pa.large_string(), pa.string_view()])
def test_every_text_layout_gives_the_rows_of_repair_call(tools, text):
    batch = pa.RecordBatch.from_arrays(
        [pa.array(NAMES, text), pa.array(ARGUMENTS, text)], names=["name", "arguments"]
    )
    out = toolmend.arrow.repair_calls(batch, tools)
    assert rows_of(out) == expected(tools)
    assert out.column("arguments_repaired")[0].as_py() == ARGUMENTS[0]  # the same bytes
    assert out.column("arguments_repaired")[6].as_py() == ARGUMENTS[6]
    for name, kind in toolmend.arrow.result_schema().items():
        assert out.schema.field(name).type == kind
    assert out.column("name").type == text  # input columns are passed through as they are


def test_dictionary_columns_and_slices_are_read_at_their_offset(tools):
    batch = pa.RecordBatch.from_arrays(
        [pa.array(NAMES).dictionary_encode(), pa.array(ARGUMENTS)], names=["name", "arguments"]
    )
    assert rows_of(toolmend.arrow.repair_calls(batch, tools)) == expected(tools)
    sliced = toolmend.arrow.repair_calls(batch.slice(2, 3), tools)
    assert rows_of(sliced) == expected(tools)[2:5]


def test_chunked_tables_whose_columns_are_cut_differently(tools):
    names = pa.chunked_array([NAMES[:2], NAMES[2:]])
    arguments = pa.chunked_array([ARGUMENTS[:5], ARGUMENTS[5:]])
    table = pa.Table.from_arrays([names, arguments], names=["name", "arguments"])
    out = toolmend.arrow.repair_calls(table, tools)
    assert isinstance(out, pa.Table)
    assert rows_of(out) == expected(tools)


def test_a_null_or_unreadable_tool_set_fails_its_rows_only(tools):
    good = json.dumps(tools)
    batch = pa.RecordBatch.from_pydict({
        "name": ["read", "read", "read", "read"],
        "arguments": ['{"path": "a"}', '{"path": "b"}', '{"path": "c"}', '{"path": "d",}'],
        "tools": [good, None, "[{not json", good],
    })
    out = toolmend.arrow.repair_calls(batch)
    assert out.column("status").to_pylist() == ["valid", "unvalidated", "unvalidated", "repaired"]
    assert out.column("arguments_repaired").to_pylist()[1:3] == [None, None]
    assert "null" in out.column("error")[1].as_py()
    assert "cannot be read" in out.column("error")[2].as_py()
    assert out.column("repairs")[1].as_py() == []


def test_a_wrong_keyword_with_a_tools_column_raises_once(tools):
    batch = pa.RecordBatch.from_pydict({"name": ["read"], "arguments": ["{}"], "tools": [json.dumps(tools)]})
    with pytest.raises(TypeError, match="no_such_option"):
        toolmend.arrow.repair_calls(batch, no_such_option=1)
    odd = pa.RecordBatch.from_pydict({"name": ["read"] * 3, "arguments": ["{}"] * 3, "tools": ["42", "null", "{}"]})
    assert set(toolmend.arrow.repair_calls(odd).column("status").to_pylist()) <= {"unvalidated", "invalid"}


def test_each_distinct_tool_set_is_resolved_once_per_batch(tools, monkeypatch):
    seen = []
    real = toolmend.arrow._mender

    def counting(t, options):
        seen.append(t)
        return real(t, options)

    monkeypatch.setattr(toolmend.arrow, "_mender", counting)
    text = json.dumps(tools)
    batch = pa.RecordBatch.from_pydict({"name": ["read"] * 50, "arguments": ['{"path": "a"}'] * 50,
                                        "tools": [text] * 50})
    toolmend.arrow.repair_calls(batch)
    assert [t for t in seen if t != []] == [text]  # ([] checks the keywords once)


def test_wrong_columns_are_a_clear_error_for_the_batch(tools):
    with pytest.raises(TypeError, match="(?i)'arguments'.*int64"):
        toolmend.arrow.repair_calls(pa.RecordBatch.from_pydict({"name": ["read"], "arguments": [1]}), tools)
    with pytest.raises(TypeError, match="'name'"):
        toolmend.arrow.repair_calls(pa.RecordBatch.from_pydict({"name": [b"read"], "arguments": ["{}"]}), tools)
    # Bytes that are not UTF-8 behind a string type: refused, never read as text.
    bad = pa.Array.from_buffers(pa.string(), 1, [None, pa.py_buffer(b"\x00\x00\x00\x00\x02\x00\x00\x00"),
                                                 pa.py_buffer(b"\xff\xfe")])
    with pytest.raises(ValueError, match="'arguments'"):
        toolmend.arrow.repair_calls(pa.RecordBatch.from_arrays([pa.array(["read"]), bad], ["name", "arguments"]), tools)


def test_all_null_columns(tools):
    batch = pa.RecordBatch.from_pydict({"name": ["read", "read"], "arguments": [None, None]})
    assert batch.schema.field("arguments").type == pa.null()
    out = toolmend.arrow.repair_calls(batch, tools)
    assert out.column("status").to_pylist() == [toolmend.Mender(tools).repair_call("read", "").status] * 2


def test_the_native_result_is_an_arrow_struct_array_exported_any_number_of_times(tools):
    exported = repair_call_columns(pa.array(NAMES), pa.array(ARGUMENTS), toolmend.Mender(tools))
    assert len(exported) == len(NAMES)
    first, second = pa.array(exported), pa.array(exported)
    assert first.equals(second)
    assert first.type == pa.struct([pa.field(n, t) for n, t in toolmend.arrow.result_schema().items()])


def test_polars_and_duckdb_results_go_in_as_they_are(tools):
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    frame = pl.DataFrame({"name": NAMES, "arguments": ARGUMENTS})
    out = toolmend.arrow.repair_calls(frame, tools)  # string_view columns, via __arrow_c_stream__
    assert isinstance(out, pa.Table)
    assert rows_of(out) == expected(tools)
    con = duckdb.connect()
    relation = con.sql("SELECT * FROM (VALUES ('read', '{\"path\": \"a\",}'), ('read', NULL)) t(name, arguments)")
    out = toolmend.arrow.repair_calls(relation, tools)
    assert out.column("status").to_pylist()[0] == "repaired"
    assert out.num_rows == 2


def corpus_turns(name="session"):
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[3] / "corpus" / f"{name}.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    columns = {}
    for key in ("id", "session", "tools", "message", "finish_reason", "new_user_turn", "options"):
        values = [line.get(key) for line in lines]
        if key in ("tools", "message", "options"):
            values = [None if v is None else json.dumps(v) for v in values]
        columns[key] = values
    return pa.table(columns)


RESULT_TURN = ("error", "content", "reasoning", "calls", "report")


@pytest.mark.parametrize("text", [pa.large_string(), pa.string_view()])
def test_run_turns_reads_every_text_layout_and_chunking(text):
    table = corpus_turns()
    want = toolmend.arrow.run_turns(table)
    cast = pa.table({n: (c.cast(text) if pa.types.is_string(c.type) else c)
                     for n, c in zip(table.column_names, table.columns)})
    # Cut in three chunks: a session's turns still share their state across the cuts.
    third = max(1, table.num_rows // 3)
    chunked = pa.Table.from_batches(cast.to_batches()[0:1]).slice(0, third)
    chunked = pa.concat_tables([chunked, cast.slice(third, third), cast.slice(2 * third)])
    assert chunked.column("message").num_chunks == 3
    got = toolmend.arrow.run_turns(chunked)
    for key in RESULT_TURN:
        assert got.column(key).to_pylist() == want.column(key).to_pylist(), key
    assert got.schema.field("calls").type == toolmend.arrow.turn_result_schema()["calls"]


def test_run_turns_takes_polars_and_refuses_wrong_types():
    pl = pytest.importorskip("polars")
    table = corpus_turns("turn")
    want = toolmend.arrow.run_turns(table)
    got = toolmend.arrow.run_turns(pl.from_arrow(table))  # string_view columns, as Polars exports
    assert got.column("calls").to_pylist() == want.column("calls").to_pylist()
    with pytest.raises(TypeError, match="'new_user_turn'"):
        toolmend.arrow.run_turns(pa.table({"message": ['{"content": "hi"}'], "new_user_turn": [1]}))
