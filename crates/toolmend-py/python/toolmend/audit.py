"""Where models break, over a dataset of recorded turns: ``toolmend audit`` as Arrow rows.

``audit(data)`` runs every row as ``toolmend.arrow.run_turns`` does (the ``toolmend turns``
contract as columns) and counts the calls by how they ended, per model, tool and repair kind,
with the library's tally (``toolmend::audit``), the one ``toolmend audit`` counts with. It
returns one row per dimension and key, the rows of ``toolmend audit --format jsonl``:

- ``dimension``: ``total``, ``model``, ``tool`` or ``kind``; ``key``: the model (``(none)``
  when a row names none), the tool name, the repair kind; keys past ``max_keys`` distinct ones
  per dimension (in order of first appearance) count under ``(other)``;
- ``turns``, ``errors``: rows that ran, and rows that could not (total and model rows only);
- ``calls``, ``valid``, ``repaired``, ``recovered``, ``invalid``, ``suppressed``,
  ``unvalidated``: calls by status (a kind row counts the calls that have that kind);
- ``silently_invalid``: native calls whose arguments were strict JSON as sent, yet repaired or
  invalid: what an agent without toolmend would have dispatched as it was;
- ``repairs``: repairs made; ``broken``: ``repaired + recovered + invalid``; ``repair_rate``:
  ``(repaired + recovered) / broken``; ``broken_rate``: ``broken / calls`` (null when 0/0).

Memory holds one batch and the counts (bounded by ``max_keys``). Sessions share their storm and
retry state within a batch only (``run_turns``): keep a session's turns in one batch.

``python -m toolmend.audit IN.parquet|IN.jsonl --out report.parquet`` writes the rows as Parquet
and prints the total.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, Iterable, Iterator, List, Optional

__all__ = ["MAX_KEYS", "audit", "main", "read_jsonl_batches", "report_schema"]

MAX_KEYS = 1000
_STATUSES = ("valid", "repaired", "recovered", "invalid", "suppressed", "unvalidated")
_COUNTS = ("turns", "errors", "calls") + _STATUSES + ("silently_invalid", "repairs")
_BATCH_ROWS = 65536


def report_schema():
    """The Arrow schema of the report ``audit`` returns."""
    import pyarrow as pa

    fields = [("dimension", pa.string()), ("key", pa.string())]
    fields += [(name, pa.int64()) for name in _COUNTS]
    fields += [("broken", pa.int64()), ("repair_rate", pa.float64()), ("broken_rate", pa.float64())]
    return pa.schema(fields)


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _with_default_tools(batch, tools):
    """``batch`` with ``tools`` (JSON text) in the rows whose ``tools`` is null or absent."""
    import pyarrow as pa

    from .arrow import _json_column

    text = tools if isinstance(tools, str) else json.dumps(tools)
    n = batch.num_rows
    if "tools" in batch.schema.names:
        column = [text if v is None else v for v in _json_column(batch.column("tools"))]
        index = batch.schema.names.index("tools")
        return batch.set_column(index, "tools", pa.array(column, pa.string()))
    return batch.append_column("tools", pa.array([text] * n, pa.string()))


def _as_tables(data) -> Iterator[Any]:
    import pyarrow as pa

    if isinstance(data, pa.Table):
        yield data
    elif isinstance(data, pa.RecordBatch):
        yield pa.Table.from_batches([data])
    else:
        for batch in data:
            yield batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])


def audit(data, tools=None, *, max_keys: int = MAX_KEYS, **options):
    """The audit report of ``data``'s turns, as a ``pyarrow.Table`` (see the module's doc).

    ``data``: a ``pyarrow.Table`` or ``RecordBatch`` of turn rows (``run_turns``' input), or an
    iterable of them (``pyarrow.parquet.ParquetFile(path).iter_batches()``). ``tools``: the tool
    set of rows whose ``tools`` is null or absent (``toolmend audit --tools``). ``options``:
    ``run_turns``' keywords (``model``, ``recover``, ``max_reprompts``, ``include_values``).
    """
    import pyarrow as pa

    from ._toolmend import AuditTally
    from .arrow import _turn_inputs

    tally = AuditTally(max_keys)
    for table in _as_tables(data):
        if tools is not None:
            table = _with_default_tools(table, tools)
        rows, defaults = _turn_inputs(table, None, options, "audit")
        # Run and counted in Rust with the GIL released; no result columns are built.
        tally.add_rows(rows, defaults)
    return pa.Table.from_pylist(tally.rows(), schema=report_schema())


_TEXT_KEYS = ("session", "model", "finish_reason")
_JSON_KEYS = ("message", "tools", "options")


def _jsonl_row(raw: bytes) -> Dict[str, Any]:
    """One JSONL line as a turn row; a line that is not UTF-8, JSON or an object gives a row
    without ``message``, which ``run_turns`` reports as an error (the CLI counts it too)."""
    try:
        line = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except ValueError:
        line = None
    if not isinstance(line, dict):
        return {}
    row: Dict[str, Any] = {}
    ident = line.get("id")
    row["id"] = ident if ident is None or isinstance(ident, str) else json.dumps(ident)
    for key in _TEXT_KEYS:
        value = line.get(key)
        row[key] = value if isinstance(value, str) else None
    for key in _JSON_KEYS:
        value = line.get(key)
        row[key] = None if value is None else json.dumps(value)
    value = line.get("new_user_turn")
    row["new_user_turn"] = value if isinstance(value, bool) else None
    return row


def read_jsonl_batches(path: str, batch_rows: int = _BATCH_ROWS) -> Iterator[Any]:
    """A JSONL file of turns as ``pyarrow`` tables of at most ``batch_rows`` rows (blank lines
    skipped; every other line is a row, unreadable ones included, so they are counted)."""
    import pyarrow as pa

    columns = ("id",) + _TEXT_KEYS + _JSON_KEYS + ("new_user_turn",)
    types = {c: pa.string() for c in columns}
    types["new_user_turn"] = pa.bool_()
    schema = pa.schema([(c, types[c]) for c in columns])
    rows: List[Dict[str, Any]] = []
    with open(path, "rb") as f:
        for raw in f:
            raw = raw.rstrip(b"\n").rstrip(b"\r")
            try:
                if not raw.decode("utf-8").strip():
                    continue  # a blank line, skipped as `toolmend turns` does
            except UnicodeDecodeError:
                pass
            rows.append(_jsonl_row(raw))
            if len(rows) >= batch_rows:
                yield pa.Table.from_pylist(rows, schema=schema)
                rows = []
    if rows:
        yield pa.Table.from_pylist(rows, schema=schema)


def _batches(path: str) -> Iterable[Any]:
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).iter_batches(batch_size=_BATCH_ROWS)
    return read_jsonl_batches(path)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m toolmend.audit", description="Where models break: an audit of recorded turns, as Parquet."
    )
    parser.add_argument("input", help="turns as Parquet (*.parquet) or JSONL (the `toolmend turns` input)")
    parser.add_argument("--out", required=True, help="the report's Parquet file")
    parser.add_argument("--tools", help="a tools array (JSON file) for rows that carry none")
    parser.add_argument("--model", help="the model id for rows that name none")
    parser.add_argument("--recover", help="off, strip, content or all")
    parser.add_argument("--max-keys", type=int, default=MAX_KEYS)
    args = parser.parse_args(argv)
    import pyarrow.parquet as pq

    tools = None
    if args.tools:
        with open(args.tools, encoding="utf-8") as f:
            tools = f.read()
    options = {k: v for k, v in (("model", args.model), ("recover", args.recover)) if v is not None}
    report = audit(_batches(args.input), tools, max_keys=args.max_keys, **options)
    pq.write_table(report, args.out)
    total = report.slice(0, 1).to_pylist()[0]
    print(
        f"{total['turns']} turns, {total['errors']} unreadable, {total['calls']} calls: "
        f"{total['broken']} broken, {total['invalid']} invalid, "
        f"{total['silently_invalid']} silently invalid; {report.num_rows} rows in {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
