"""Batch repair of recorded tool calls as Arrow columns (``pyarrow``), for dataset engines.

``repair_calls(batch, tools)`` takes a ``pyarrow.RecordBatch`` or ``pyarrow.Table`` with string
columns ``name`` and ``arguments`` (one row per call) and returns the same kind of object with
the input columns and four more:

- ``status`` (string): ``valid``, ``repaired``, ``recovered``, ``invalid`` or ``unvalidated``;
- ``arguments_repaired`` (string): the text to dispatch (the input bytes when valid), null when
  the call is not dispatchable;
- ``repairs`` (list<struct<kind: string, path: string>>): what was changed, where;
- ``error`` (string): the retry message for the model, null when there is none.

The columns go to the native side and the results come back through the Arrow C data
interface (the PyCapsule protocol): the input buffers are read in place, the result buffers are
handed to pyarrow as they are, and no Python object is made per row. Each record batch is
repaired with the GIL released: other Python threads run meanwhile, and a Ray or Spark worker
spends its time in the engine, not in a Python loop. One ``Mender`` is compiled per tool set
and options and kept across batches (the library's ``MenderCache``: bounded in entries and
bytes, shared with ``run_turns``). Polars, DuckDB and other objects that export the
PyCapsule interface are accepted as they are.

It plugs into the engines' Arrow batch hooks as is::

    ds.map_batches(toolmend.arrow.repair_calls, batch_format="pyarrow", fn_kwargs={"tools": tools})

``run_turns(batch)`` does the same for whole assistant turns: one row per line of the
``toolmend turns`` JSONL contract (a ``message`` column, and ``id``, ``session``, ``model``,
``tools``, ``finish_reason``, ``new_user_turn``, ``options`` when present), returning the input
columns and the turn's result: ``error``, ``content``, ``reasoning``, ``calls`` and ``report``
(see ``run_turns``).

``audit(data)`` counts ``run_turns``' results over a dataset: calls by status per model, tool and
repair kind, silently-invalid calls (see ``toolmend.audit``), as the rows of a table.
"""

from __future__ import annotations

import json
from typing import Any, Dict

from ._toolmend import Mender, cached_mender, repair_call_columns, run_turn_columns

__all__ = ["audit", "repair_calls", "result_schema", "run_turns", "turn_result_schema"]


def _mender(tools: Any, options: Dict[str, Any]) -> Mender:
    """The ``Mender`` for ``tools`` and ``options``: a ``Mender`` as given, else compiled once
    per process in the library's bounded cache (shared with ``run_turns``) and reused."""
    return cached_mender(tools, **options)


def result_schema():
    """The Arrow types of the four columns ``repair_calls`` adds, by name."""
    import pyarrow as pa

    return {
        "status": pa.string(),
        "arguments_repaired": pa.string(),
        "repairs": pa.list_(pa.struct([("kind", pa.string()), ("path", pa.string())])),
        "error": pa.string(),
    }


def _as_arrow(data, caller):
    """``data`` as a pyarrow RecordBatch or Table, read in place.

    pyarrow objects are used as they are; anything else that exports the Arrow PyCapsule
    interface (a Polars DataFrame, a DuckDB result, a nanoarrow or arro3 table) is imported
    through ``__arrow_c_stream__`` / ``__arrow_c_array__`` without copying its buffers.
    """
    import pyarrow as pa

    if isinstance(data, (pa.RecordBatch, pa.Table)):
        return data
    if hasattr(data, "__arrow_c_stream__"):
        return pa.table(data)
    if hasattr(data, "__arrow_c_array__"):
        return pa.record_batch(data)
    raise TypeError(
        f"{caller} takes a pyarrow RecordBatch or Table (or an object exporting the Arrow "
        f"PyCapsule interface), not {type(data).__name__}"
    )


def _text_column(column):
    """A column ready for the native side: dictionary-encoded text is decoded (a copy)."""
    import pyarrow as pa

    if pa.types.is_dictionary(column.type):
        return column.dictionary_decode()
    return column


def _repair_record_batch(batch, mender, mender_for):
    """The four result columns of one RecordBatch, as a RecordBatch (buffers from Rust)."""
    import pyarrow as pa

    tools = _text_column(batch.column("tools")) if mender is None else None
    exported = repair_call_columns(
        _text_column(batch.column("name")),
        _text_column(batch.column("arguments")),
        mender,
        tools,
        mender_for,
    )
    return pa.record_batch(exported)


def repair_calls(batch, tools=None, **options):
    """Repairs every call of an Arrow batch; returns the batch with the result columns added.

    ``batch``: a ``pyarrow.RecordBatch`` or ``pyarrow.Table`` (or anything exporting the Arrow
    PyCapsule interface, such as a Polars DataFrame or a DuckDB result: the answer is then a
    ``pyarrow.Table``) with text columns ``name`` and ``arguments`` (``string``,
    ``large_string``, ``string_view`` or dictionary-encoded; a null is judged as empty text,
    never filled in). ``tools``: the tool set of the whole batch (anything ``Mender`` accepts: a
    list of tool dicts in OpenAI, Anthropic or MCP form, their JSON text, or a ``Mender``);
    when it is ``None``, each row's tools come from a text column ``tools`` (JSON text; rows
    with the same text share one ``Mender``; a row whose tools are null or unreadable is
    ``unvalidated`` with an ``error`` saying why). ``options``: ``Mender``'s keywords
    (``model``, ``recover``, limits). Columns already named like a result column are replaced.

    The columns are read in place and the results written by the native side, through the Arrow
    C data interface; each record batch runs with the GIL released.
    """
    import pyarrow as pa

    batch = _as_arrow(batch, "repair_calls")
    for column in ("name", "arguments"):
        if column not in batch.schema.names:
            raise ValueError(f"repair_calls needs a {column!r} column; the batch has {batch.schema.names}")
    if tools is not None:
        mender, mender_for = _mender(tools, options), None
    elif "tools" in batch.schema.names:
        mender = None
        _mender([], options)  # a wrong keyword is an error of the call, not of every row

        def mender_for(text):
            return _mender(text, options)

    else:
        raise ValueError("repair_calls needs tools=... or a 'tools' column (JSON text per row)")
    types = result_schema()
    keep = [i for i, n in enumerate(batch.schema.names) if n not in types]
    if isinstance(batch, pa.RecordBatch):
        added = _repair_record_batch(batch, mender, mender_for)
        columns = [batch.column(i) for i in keep] + added.columns
        fields = [batch.schema.field(i) for i in keep] + list(added.schema)
        return pa.RecordBatch.from_arrays(columns, schema=pa.schema(fields, metadata=batch.schema.metadata))
    schema = pa.schema(
        [batch.schema.field(i) for i in keep] + [pa.field(n, t) for n, t in types.items()],
        metadata=batch.schema.metadata,
    )
    out = []
    for part in batch.to_batches():
        added = _repair_record_batch(part, mender, mender_for)
        out.append(pa.RecordBatch.from_arrays([part.column(i) for i in keep] + added.columns, schema=schema))
    return pa.Table.from_batches(out, schema=schema)


def turn_result_schema():
    """The Arrow types of the five columns ``run_turns`` adds, by name."""
    import pyarrow as pa

    repair = pa.struct([("kind", pa.string()), ("path", pa.string())])
    call = pa.struct(
        [
            ("id", pa.string()),
            ("name", pa.string()),
            ("origin", pa.string()),
            ("status", pa.string()),
            ("arguments", pa.string()),
            ("arguments_text", pa.string()),
            ("repairs", pa.list_(repair)),
            ("notes", pa.list_(pa.string())),
            ("outcome", pa.string()),
            ("error", pa.string()),
            ("native_index", pa.int64()),
        ]
    )
    report = pa.struct([(name, pa.int64()) for name in _REPORT_FIELDS])
    return {
        "error": pa.string(),
        "content": pa.string(),
        "reasoning": pa.string(),
        "calls": pa.list_(call),
        "report": report,
    }


_REPORT_FIELDS = ("repaired", "invalid", "scavenged", "truncations_fixed", "storms_broken", "duplicates_dropped")

# The input columns of a turn row, as ``toolmend turns`` names a line's keys, and how each is read.
_JSON_COLUMNS = ("message", "tools", "options")  # JSON text, or nested Arrow values
_TEXT_COLUMNS = ("session", "model", "finish_reason")
_TURN_OPTIONS = ("recover", "model", "max_reprompts", "include_values")


def _without_nulls(value):
    """``value`` with null object members left out, at every depth."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _json_column(column):
    """A column as JSON text per row: string columns as written, nested ones encoded.

    A struct column gives every row every field of its type, null where the row had none (a
    JSONL reader unifies the rows' keys), so it cannot tell a missing key from a null one: a
    null member is read as missing, or a tool would gain ``"enum": null`` and the like. JSON
    text columns are read exactly.
    """
    import pyarrow as pa

    if _is_text(column):
        return column.to_pylist()
    return [None if v is None else json.dumps(_without_nulls(v)) for v in column.to_pylist()]


def _id_column(column):
    """Line ids as text: a string as is, anything else as its JSON (as ``toolmend turns``)."""
    return [v if v is None or isinstance(v, str) else json.dumps(v) for v in column.to_pylist()]


def run_turns(batch, tools=None, **options):
    """Runs every assistant turn of an Arrow batch; returns the batch with the result columns.

    ``batch``: a ``pyarrow.RecordBatch`` or ``pyarrow.Table`` (or an object exporting the Arrow
    PyCapsule interface: a ``pyarrow.Table`` comes back), one row per line of the
    ``toolmend turns`` JSONL contract: ``message`` (the OpenAI-style assistant message: JSON
    text, or a struct column), and optionally ``id``, ``session``, ``model``, ``tools`` (JSON
    text or nested), ``finish_reason``, ``new_user_turn`` and ``options`` (``recover``,
    ``max_reprompts``). Rows run in order; rows with the same ``session`` share its storm and
    retry state within the batch (keep a session's turns in one batch, in order). ``tools``:
    the tool set of every row (a list of tool dicts or their JSON text) instead of the column.
    ``options``: ``recover``, ``model``, ``max_reprompts``, ``include_values`` for rows that
    do not set their own (as ``toolmend turns``'s flags).

    Adds (replacing columns of the same name): ``error`` (why a row could not be run; null
    when it ran), ``content`` and ``reasoning`` (the text with recovered markup removed),
    ``calls`` (per call: ``id``, ``name``, ``origin``, ``status``, ``arguments`` as JSON text,
    ``arguments_text`` to dispatch, ``repairs``, ``notes``, ``outcome``, ``error``,
    ``native_index``) and ``report`` (the turn's counts). A row with an error has null
    ``calls`` and ``report``; the rows after it go on. The whole batch runs in Rust with the GIL
    released; compiled tool sets are cached across batches. Text columns (``string``,
    ``large_string``, ``string_view``, dictionary) go in and the results come out through the
    Arrow C data interface; struct columns are encoded as JSON text first (in Python).
    """
    import pyarrow as pa

    batch = _as_arrow(batch, "run_turns")
    names = _check_turn_input(batch, options, "run_turns")
    # One record batch: rows of a session share its state across the whole input, so a
    # chunked table is made one chunk (free when it already is).
    rows = batch if isinstance(batch, pa.RecordBatch) else _one_batch(batch)
    columns = {}
    for key in ("message", "tools", "options"):
        if key in names:
            columns[key] = _json_text_array(rows.column(key))
    if "id" in names:
        columns["id"] = _id_array(rows.column("id"))
    for key in _TEXT_COLUMNS:
        if key in names:
            columns[key] = _text_column(rows.column(key))
    if "new_user_turn" in names:
        columns["new_user_turn"] = rows.column("new_user_turn")
    defaults = _turn_defaults(tools, options)
    added = pa.record_batch(run_turn_columns(columns, defaults))
    keep = [n for n in names if n not in added.schema.names]
    arrays = [batch.column(n) for n in keep] + added.columns
    names_out = keep + added.schema.names
    if isinstance(batch, pa.Table):
        return pa.Table.from_arrays(arrays, names=names_out)
    return pa.RecordBatch.from_arrays(arrays, names=names_out)


def _check_turn_input(batch, options, caller):
    """``batch``'s column names, once its keywords and its ``message`` column are checked;
    ``caller`` names the public function in errors."""
    unknown = sorted(set(options) - set(_TURN_OPTIONS))
    if unknown:
        raise TypeError(f"{caller}() got unexpected keyword arguments {unknown}; it takes {list(_TURN_OPTIONS)}")
    names = batch.schema.names
    if "message" not in names:
        raise ValueError(f"{caller} needs a 'message' column; the batch has {names}")
    return names


def _turn_defaults(tools, options):
    """What rows that set none run with: the batch's tool set (JSON text) and the keywords."""
    if tools is not None and not isinstance(tools, str):
        tools = json.dumps(tools)
    return {
        "tools": tools,
        "recover": options.get("recover"),
        "model": options.get("model"),
        "max_reprompts": options.get("max_reprompts"),
        "include_values": bool(options.get("include_values", False)),
    }


def _turn_inputs(batch, tools, options, caller):
    """``run_turn_rows``' two arguments for ``batch``: its columns as lists, and the defaults
    (``tools``, the keywords); ``caller`` names the public function in errors."""
    import pyarrow as pa

    if not isinstance(batch, (pa.RecordBatch, pa.Table)):
        raise TypeError(f"{caller} takes a pyarrow RecordBatch or Table, not {type(batch).__name__}")
    names = _check_turn_input(batch, options, caller)
    column = batch.column
    rows = {
        "messages": _json_column(column("message")),
        "ids": _id_column(column("id")) if "id" in names else None,
        "tools": _json_column(column("tools")) if "tools" in names else None,
        "options": _json_column(column("options")) if "options" in names else None,
        "new_user_turns": column("new_user_turn").to_pylist() if "new_user_turn" in names else None,
    }
    for key in _TEXT_COLUMNS:
        rows[key + "s"] = column(key).to_pylist() if key in names else None
    defaults = _turn_defaults(tools, options)
    return rows, defaults


def _one_batch(table):
    """A table as one RecordBatch (a copy only when it has several chunks)."""
    import pyarrow as pa

    batches = table.combine_chunks().to_batches()
    if not batches:
        return pa.RecordBatch.from_pylist([], schema=table.schema)
    return batches[0]


def _is_text(column):
    import pyarrow as pa

    t = column.type
    if pa.types.is_dictionary(t):
        t = t.value_type
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _json_text_array(column):
    """A JSON column as text for the native side: text columns as they are, nested ones encoded."""
    import pyarrow as pa

    if _is_text(column):
        return _text_column(column)
    return pa.array(_json_column(column), pa.string())


def _id_array(column):
    import pyarrow as pa

    if _is_text(column):
        return _text_column(column)
    return pa.array(_id_column(column), pa.string())


def audit(data, tools=None, **options):
    """Where models break: ``toolmend audit``'s counts over turn rows, as a ``pyarrow.Table``.

    ``data``: a ``pyarrow.Table`` or ``RecordBatch`` of ``run_turns`` rows, or an iterable of
    them; ``tools``: the tool set of rows that carry none; ``options``: ``max_keys`` and
    ``run_turns``' keywords. One row per dimension (``total``, ``model``, ``tool``, ``kind``)
    and key; see ``toolmend.audit`` for the columns.
    """
    from .audit import audit as _audit

    return _audit(data, tools, **options)
