"""toolmend.arrow.run_turns: whole assistant turns as Arrow rows, equal to ``toolmend turns``."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import pyarrow as pa
import pytest

import toolmend.arrow

REPO = pathlib.Path(__file__).resolve().parents[3]
CORPUS = ["valid", "salvage", "session", "shape", "turn", "recover"]
COLUMNS = ("id", "session", "model", "tools", "message", "finish_reason", "new_user_turn", "options")


def toolmend_bin() -> str:
    """The CLI the rows are compared with: $TOOLMEND_BIN, or a cargo build of it."""
    if os.environ.get("TOOLMEND_BIN"):
        return os.environ["TOOLMEND_BIN"]
    for target in (os.environ.get("CARGO_TARGET_DIR"), str(REPO / "target")):
        for profile in ("release", "debug"):
            if target and (pathlib.Path(target) / profile / "toolmend").is_file():
                return str(pathlib.Path(target) / profile / "toolmend")
    pytest.fail("no toolmend CLI: set TOOLMEND_BIN (cargo build --bin toolmend)")


def turn_table(lines: list) -> pa.Table:
    """Corpus lines as a table of the contract's columns (nested values as JSON text)."""
    columns = {}
    for key in COLUMNS:
        values = [line.get(key) for line in lines]
        if key in ("tools", "message", "options"):
            values = [None if v is None else json.dumps(v) for v in values]
        columns[key] = values
    return pa.table(columns)


def same_call(got: dict, want: dict) -> bool:
    arguments = None if got["arguments"] is None else json.loads(got["arguments"])
    return (
        got["id"] == want["id"]
        and got["name"] == want["name"]
        and got["origin"] == want["origin"]
        and got["status"] == want["status"]
        and arguments == want["arguments"]
        and got["repairs"] == want["repairs"]
        and got["notes"] == want["notes"]
        and got["outcome"] == want["outcome"]
        and got["error"] == want["error"]
    )


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_file_matches_toolmend_turns(name):
    path = REPO / "corpus" / f"{name}.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    cli = subprocess.run([toolmend_bin(), "turns", str(path)], capture_output=True, text=True, check=True)
    want = [json.loads(line) for line in cli.stdout.splitlines()]
    out = toolmend.arrow.run_turns(turn_table(lines))
    assert out.num_rows == len(lines) == len(want)
    assert out.column("id").to_pylist() == [line.get("id") for line in lines]  # input columns kept
    calls = 0
    for line, row, w in zip(lines, out.to_pylist(), want):
        assert row["error"] == w.get("error"), line["id"]
        if w.get("error"):
            continue
        assert len(row["calls"]) == len(w["calls"]), line["id"]
        for got, expected in zip(row["calls"], w["calls"]):
            assert same_call(got, expected), f"{line['id']}:\n got {got}\n cli {expected}"
            calls += 1
        assert row["report"] == {k: w["report"].get(k, 0) for k in row["report"]}, line["id"]
        if name == "valid":
            sent = [c["function"]["arguments"] for c in line["message"]["tool_calls"]]
            assert [c["arguments_text"] for c in row["calls"]] == sent, line["id"]
            assert all(c["status"] == "valid" for c in row["calls"])
    assert calls > 0


def read_tools():
    return [
        {
            "type": "function",
            "function": {
                "name": "read",
                "parameters": {
                    "type": "object",
                    "required": ["path"],
                    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
                    "additionalProperties": False,
                },
            },
        }
    ]


def message(arguments: str, call_id: str = "c1") -> dict:
    return {"content": None, "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "read", "arguments": arguments}}]}


def test_a_bad_row_is_an_error_and_the_rest_go_on():
    batch = pa.RecordBatch.from_pydict(
        {
            "message": [json.dumps(message('{"path": "a"}')), "not json", None, json.dumps(message('{"path": "b", "limit": "2"}'))],
            "note": ["kept", "kept", "kept", "kept"],
        }
    )
    out = toolmend.arrow.run_turns(batch, tools=read_tools())
    assert isinstance(out, pa.RecordBatch)
    rows = out.to_pylist()
    assert [r["note"] for r in rows] == ["kept"] * 4
    assert rows[0]["error"] is None and rows[0]["calls"][0]["status"] == "valid"
    assert rows[1]["error"] and rows[1]["calls"] is None and rows[1]["report"] is None
    assert rows[2]["error"] == "no `message` object"
    assert rows[3]["calls"][0]["status"] == "repaired"
    assert json.loads(rows[3]["calls"][0]["arguments_text"]) == {"path": "b", "limit": 2}
    assert {r["kind"] for r in rows[3]["calls"][0]["repairs"]} == {"scalar_coerced"}
    assert rows[3]["report"]["repaired"] == 1


def test_sessions_share_retry_state_within_the_batch():
    broken = json.dumps(message('{"limit": 1}'))
    batch = pa.table({"message": [broken] * 3, "session": ["s", "s", None]})
    out = toolmend.arrow.run_turns(batch, tools=json.dumps(read_tools()), max_reprompts=1)
    outcomes = [row["calls"][0]["outcome"] for row in out.to_pylist()]
    # The second identical invalid call of session "s" is past its budget; a row without a
    # session starts afresh.
    assert outcomes == ["re-prompt", "gave-up", "re-prompt"]


def test_nested_message_columns_and_row_tools():
    batch = pa.table(
        {
            "message": pa.array([message('{"path": "a",}')]),  # a struct column
            "tools": [json.dumps(read_tools())],
            "id": [7],
        }
    )
    out = toolmend.arrow.run_turns(batch)
    call = out.column("calls")[0].as_py()[0]
    assert call["status"] == "repaired" and call["arguments_text"] == '{"path":"a"}'
    assert out.schema.field("calls").type == toolmend.arrow.turn_result_schema()["calls"]


def test_struct_columns_from_a_jsonl_reader():
    """pyarrow.json gives every row every key of the column (null where absent): read as absent."""
    import pyarrow.json

    path = REPO / "corpus" / "valid.jsonl"
    out = toolmend.arrow.run_turns(pyarrow.json.read_json(path))
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for line, calls in zip(lines, out.column("calls").to_pylist()):
        sent = [c["function"]["arguments"] for c in line["message"]["tool_calls"]]
        assert [(c["status"], c["arguments_text"]) for c in calls] == [("valid", s) for s in sent], line["id"]


def test_result_columns_replace_columns_of_the_same_name():
    batch = pa.table({"message": [json.dumps(message('{"path": "a"}'))], "report": ["old"]})
    out = toolmend.arrow.run_turns(batch, tools=read_tools())
    assert out.schema.names == ["message", "error", "content", "reasoning", "calls", "report"]
    assert out.column("report")[0].as_py()["invalid"] == 0


def test_bad_arguments_are_refused():
    with pytest.raises(TypeError):
        toolmend.arrow.run_turns({"message": []})
    with pytest.raises(ValueError, match="message"):
        toolmend.arrow.run_turns(pa.table({"name": ["read"]}))
    with pytest.raises(TypeError, match="unexpected"):
        toolmend.arrow.run_turns(pa.table({"message": ["{}"]}), recovr="all")
