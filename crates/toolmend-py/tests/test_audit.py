"""toolmend.arrow.audit and ``python -m toolmend.audit``: the same counts as ``toolmend audit``."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import toolmend.arrow
from toolmend.audit import read_jsonl_batches, report_schema

from test_arrow_turns import toolmend_bin

REPO = pathlib.Path(__file__).resolve().parents[3]
DATA = REPO / "crates" / "toolmend-cli" / "tests" / "data"
FIXTURE = DATA / "audit.jsonl"
TOOLS = DATA / "audit-tools.json"
CORPUS = ["valid", "salvage", "session", "shape", "turn", "recover"]


def cli_rows(path: pathlib.Path, *args: str) -> list:
    out = subprocess.run(
        [toolmend_bin(), "audit", str(path), "--format", "jsonl", *args], capture_output=True, text=True, check=True
    )
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_the_fixture_equals_the_cli_row_for_row():
    tools = TOOLS.read_text()
    report = toolmend.arrow.audit(read_jsonl_batches(str(FIXTURE)), tools)
    assert report.schema == report_schema()
    want = cli_rows(FIXTURE, "--tools", str(TOOLS))
    assert report.to_pylist() == want
    total = report.to_pylist()[0]
    # The numbers the CLI's own test counts by hand (crates/toolmend-cli/tests/audit.rs).
    assert (total["turns"], total["errors"], total["calls"]) == (8, 3, 10)
    assert (total["valid"], total["repaired"], total["invalid"], total["silently_invalid"]) == (4, 3, 3, 4)


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_files_equal_the_cli(name):
    path = REPO / "corpus" / f"{name}.jsonl"
    report = toolmend.arrow.audit(read_jsonl_batches(str(path)))
    assert report.to_pylist() == cli_rows(path)


def test_batches_add_up_to_the_whole():
    """Counts summed over batches of three rows equal the report of the whole table."""
    whole = toolmend.arrow.audit(pa.concat_tables(list(read_jsonl_batches(str(FIXTURE)))), TOOLS.read_text())
    split = toolmend.arrow.audit(read_jsonl_batches(str(FIXTURE), batch_rows=3), TOOLS.read_text())
    assert split.to_pylist() == whole.to_pylist()


def test_keys_past_the_cap_count_as_other():
    tools = [{"name": "t", "parameters": {"type": "object"}}]
    call = {"tool_calls": [{"id": "c", "function": {"name": "t", "arguments": "{}"}}]}
    table = pa.table({"model": [f"m{i}" for i in range(5)], "message": [json.dumps(call)] * 5})
    report = toolmend.arrow.audit(table, tools, max_keys=3).to_pylist()
    models = [(r["key"], r["calls"]) for r in report if r["dimension"] == "model"]
    assert models == [("m0", 1), ("m1", 1), ("m2", 1), ("(other)", 2)]


def test_module_writes_parquet(tmp_path):
    source = tmp_path / "turns.parquet"
    pq.write_table(pa.concat_tables(list(read_jsonl_batches(str(FIXTURE)))), source)
    out = tmp_path / "report.parquet"
    run = subprocess.run(
        [sys.executable, "-m", "toolmend.audit", str(source), "--tools", str(TOOLS), "--out", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": ":".join(sys.path)},
    )
    assert run.returncode == 0, run.stderr
    assert "8 turns, 3 unreadable, 10 calls" in run.stdout
    assert pq.read_table(out).to_pylist() == cli_rows(FIXTURE, "--tools", str(TOOLS))


def test_edge_rows_equal_the_cli(tmp_path):
    """Rows where the two counters once differed: an empty model, a rejected row that names
    its model, arguments sent as an object, text that is not strict JSON (``NaN``)."""
    tools = [
        {
            "name": "read",
            "parameters": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}},
        }
    ]

    def call(arguments):
        return {"tool_calls": [{"id": "c", "type": "function", "function": {"name": "read", "arguments": arguments}}]}

    lines = [
        {"model": "", "message": call('{"file_path": "a"}')},
        {"model": "m", "message": call({"file_path": "b"})},
        {"model": "m", "message": call('{"path": NaN}')},
        {"model": "bad", "message": "not an object"},
        {"model": "m", "message": call('{"path": "ok"}'), "options": {"recover": "nonsense"}},
        {"message": call("{'path': 'x'}")},
    ]
    path = tmp_path / "edge.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    tools_path = tmp_path / "tools.json"
    tools_path.write_text(json.dumps(tools))
    report = toolmend.arrow.audit(read_jsonl_batches(str(path)), tools, model="dflt").to_pylist()
    assert report == cli_rows(path, "--tools", str(tools_path), "--model", "dflt")
    total = report[0]
    assert (total["turns"], total["errors"], total["silently_invalid"]) == (4, 2, 2)
