"""Where models break, over a dataset of recorded turns: ``toolmend audit`` as Arrow rows.

``audit(data)`` runs every row through ``toolmend.arrow.run_turns`` (the ``toolmend turns``
contract as columns) and counts the calls by how they ended, per model, tool and repair kind,
with pyarrow compute on ``run_turns``' output columns. It returns one row per dimension and key,
the same counts as ``toolmend audit --format jsonl``:

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
from collections import OrderedDict
from typing import Any, Dict, Iterable, Iterator, List, Optional

__all__ = ["MAX_KEYS", "audit", "main", "read_jsonl_batches", "report_schema"]

MAX_KEYS = 1000
OTHER = "(other)"
NO_MODEL = "(none)"
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


class _Keyed:
    """Counts by key, at most ``max_keys`` distinct keys; later keys go to ``(other)``."""

    def __init__(self, max_keys: int):
        self.max_keys = max_keys
        self.named: "OrderedDict[str, Dict[str, int]]" = OrderedDict()
        self.other = dict.fromkeys(_COUNTS, 0)

    def entry(self, key: str) -> Dict[str, int]:
        counts = self.named.get(key)
        if counts is not None:
            return counts
        if len(self.named) >= self.max_keys:
            return self.other
        counts = self.named[key] = dict.fromkeys(_COUNTS, 0)
        return counts

    def rows(self):
        """(key, counts), most calls first, then by key; ``(other)`` last when used."""
        rows = sorted(self.named.items(), key=lambda kv: (-kv[1]["calls"], kv[0]))
        if any(self.other.values()):
            rows.append((OTHER, self.other))
        return rows


def _native_arguments(call: Any) -> str:
    """A native call's argument text as sent, as ``toolmend turns`` reads it."""
    if not isinstance(call, dict):
        return ""
    function = call["function"] if "function" in call else call
    if not isinstance(function, dict):
        return ""
    arguments = function.get("arguments") if "arguments" in function else function.get("input")
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments)


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _is_strict_json(text: str) -> bool:
    """Whether ``text`` is RFC 8259 JSON (no NaN or Infinity, as ``serde_json`` reads it)."""
    try:
        json.loads(text, parse_constant=_reject_constant)
    except ValueError:
        return False
    return True


def _message_of(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


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
    import pyarrow.compute as pc

    from .arrow import run_turns

    default_model = options.get("model") or NO_MODEL
    total = dict.fromkeys(_COUNTS, 0)
    models, tool_keys, kinds = _Keyed(max_keys), _Keyed(max_keys), _Keyed(max_keys)
    for table in _as_tables(data):
        if tools is not None:
            table = _with_default_tools(table, tools)
        out = run_turns(table, **options)
        _count_batch(out, default_model, total, models, tool_keys, kinds, pa, pc)
    return _report(total, models, tool_keys, kinds)


def _count_batch(out, default_model, total, models, tools, kinds, pa, pc):
    n = out.num_rows
    if "model" in out.schema.names:
        row_model = [m if isinstance(m, str) and m else default_model for m in out.column("model").to_pylist()]
    else:
        row_model = [default_model] * n
    failed = pc.is_valid(out.column("error")).to_pylist()
    # Rows: turns and errors per model, models keyed in order of first appearance (as the CLI).
    for model, bad in zip(row_model, failed):
        counts = models.entry(model)
        key = "errors" if bad else "turns"
        counts[key] += 1
        total[key] += 1

    calls_column = out.column("calls").combine_chunks() if isinstance(out, pa.Table) else out.column("calls")
    calls = pc.list_flatten(calls_column)
    if len(calls) == 0:
        return
    parents = pc.list_parent_indices(calls_column).to_pylist()

    def field(name):
        return pc.struct_field(calls, name)  # applies the struct's offset, unlike .field()

    status = field("status").to_pylist()
    names = field("name").to_pylist()
    origin = field("origin")
    native_index = field("native_index").to_pylist()
    repairs = field("repairs")
    repair_counts = pc.list_value_length(repairs).fill_null(0).to_pylist()
    # Silently invalid: only the native repaired or invalid calls need their text looked at.
    suspect = pc.and_(
        pc.equal(origin, "native"), pc.is_in(field("status"), pa.array(["repaired", "invalid"]))
    )
    silently = [False] * len(calls)
    messages: Dict[int, Any] = {}
    message_column = out.column("message")
    for i in pc.indices_nonzero(suspect.fill_null(False)).to_pylist():
        row = parents[i]
        if row not in messages:
            messages[row] = _message_of(message_column[row].as_py())
        message = messages[row]
        sent = message.get("tool_calls") if isinstance(message, dict) else None
        j = native_index[i]
        if isinstance(sent, list) and j is not None and 0 <= j < len(sent):
            silently[i] = _is_strict_json(_native_arguments(sent[j]))

    def add(counts, i, repairs_made):
        counts["calls"] += 1
        counts[status[i] if status[i] in _STATUSES else "unvalidated"] += 1
        counts["silently_invalid"] += silently[i]
        counts["repairs"] += repairs_made

    kind_lists = pc.struct_field(pc.list_flatten(repairs), "kind").to_pylist()
    kind_offsets = pc.list_value_length(repairs).fill_null(0).to_pylist()
    start = 0
    for i in range(len(calls)):
        add(total, i, repair_counts[i])
        add(models.entry(row_model[parents[i]]), i, repair_counts[i])
        add(tools.entry(names[i]), i, repair_counts[i])
        end = start + kind_offsets[i]
        of_kind: Dict[str, int] = {}
        for kind in kind_lists[start:end]:
            of_kind[kind] = of_kind.get(kind, 0) + 1
        start = end
        for kind in sorted(of_kind):
            add(kinds.entry(kind), i, of_kind[kind])


def _report(total, models, tools, kinds):
    import pyarrow as pa

    rows: List[Dict[str, Any]] = []

    def push(dimension, key, counts, lines):
        row = {"dimension": dimension, "key": key}
        row.update(counts)
        if not lines:
            row["turns"] = row["errors"] = None
        broken = counts["repaired"] + counts["recovered"] + counts["invalid"]
        row["broken"] = broken
        row["repair_rate"] = (counts["repaired"] + counts["recovered"]) / broken if broken else None
        row["broken_rate"] = broken / counts["calls"] if counts["calls"] else None
        rows.append(row)

    push("total", "all", total, True)
    for dimension, keyed, lines in (("model", models, True), ("tool", tools, False), ("kind", kinds, False)):
        for key, counts in keyed.rows():
            push(dimension, key, counts, lines)
    return pa.Table.from_pylist(rows, schema=report_schema())


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
