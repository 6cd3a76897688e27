"""Batch repair of recorded tool calls as Arrow columns (``pyarrow``), for dataset engines.

``repair_calls(batch, tools)`` takes a ``pyarrow.RecordBatch`` or ``pyarrow.Table`` with string
columns ``name`` and ``arguments`` (one row per call) and returns the same kind of object with
the input columns and four more:

- ``status`` (string): ``valid``, ``repaired``, ``recovered``, ``invalid`` or ``unvalidated``;
- ``arguments_repaired`` (string): the text to dispatch (the input bytes when valid), null when
  the call is not dispatchable;
- ``repairs`` (list<struct<kind: string, path: string>>): what was changed, where;
- ``error`` (string): the retry message for the model, null when there is none.

The batch is read out of Arrow once, repaired in Rust with the GIL released for the whole
batch, and written back as Arrow arrays: other Python threads run meanwhile, and a Ray or Spark
worker spends its time in the engine, not in a Python loop. One ``Mender`` is compiled per tool
set and kept (bounded LRU) across batches. The columns are copied in and out (not zero-copy
through the Arrow C data interface): see the README's "Batch repair" for what that costs.

It plugs into the engines' Arrow batch hooks as is::

    ds.map_batches(toolmend.arrow.repair_calls, batch_format="pyarrow", fn_kwargs={"tools": tools})

``run_turns(batch)`` does the same for whole assistant turns: one row per line of the
``toolmend turns`` JSONL contract (a ``message`` column, and ``id``, ``session``, ``model``,
``tools``, ``finish_reason``, ``new_user_turn``, ``options`` when present), returning the input
columns and the turn's result: ``error``, ``content``, ``reasoning``, ``calls`` and ``report``
(see ``run_turns``).

``audit(data)`` runs the same turns and counts them: calls by status per model, tool and repair
kind, silently-invalid calls (see ``toolmend.audit``), as the rows of a table, counted by the
library's tally that ``toolmend audit`` uses.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any, Dict, Tuple

from ._toolmend import Mender, run_turn_rows

__all__ = ["audit", "repair_calls", "result_schema", "run_turns", "turn_result_schema"]

# Compiled menders by (tools JSON, options JSON); a worker process usually sees one tool set.
_CACHE_ENTRIES = 64
_cache: "OrderedDict[Tuple[str, str], Mender]" = OrderedDict()
_cache_lock = threading.Lock()


def _mender(tools: Any, options: Dict[str, Any]) -> Mender:
    if isinstance(tools, Mender):
        return tools
    key = (
        tools if isinstance(tools, str) else json.dumps(tools, sort_keys=True, default=str),
        json.dumps(options, sort_keys=True),
    )
    with _cache_lock:
        mender = _cache.get(key)
        if mender is not None:
            _cache.move_to_end(key)
            return mender
    mender = Mender(json.loads(tools) if isinstance(tools, str) else tools, **options)
    with _cache_lock:
        _cache[key] = mender
        while len(_cache) > _CACHE_ENTRIES:
            _cache.popitem(last=False)
    return mender


def _per_row_tools(tools_column, names, arguments, options):
    """``repair_many`` per distinct tool set of the rows, results put back in row order."""
    groups: "Dict[str, list]" = {}
    for i, text in enumerate(tools_column):
        if text is None:
            raise ValueError(f"row {i} has no tools (null in the 'tools' column)")
        groups.setdefault(text, []).append(i)
    n = len(names)
    status, repaired, error = [None] * n, [None] * n, [None] * n
    per_row = [None] * n
    for text, rows in groups.items():
        s, r, offs, ks, ps, e = _mender(text, options).repair_many(
            [names[i] for i in rows], [arguments[i] for i in rows]
        )
        for j, i in enumerate(rows):
            status[i], repaired[i], error[i] = s[j], r[j], e[j]
            per_row[i] = (ks[offs[j] : offs[j + 1]], ps[offs[j] : offs[j + 1]])
    offsets, kinds, paths = [0], [], []
    for ks, ps in per_row:
        kinds.extend(ks)
        paths.extend(ps)
        offsets.append(len(kinds))
    return status, repaired, offsets, kinds, paths, error


def result_schema():
    """The Arrow types of the four columns ``repair_calls`` adds, by name."""
    import pyarrow as pa

    return {
        "status": pa.string(),
        "arguments_repaired": pa.string(),
        "repairs": pa.list_(pa.struct([("kind", pa.string()), ("path", pa.string())])),
        "error": pa.string(),
    }


def repair_calls(batch, tools=None, **options):
    """Repairs every call of an Arrow batch; returns the batch with the result columns added.

    ``batch``: a ``pyarrow.RecordBatch`` or ``pyarrow.Table`` with string columns ``name`` and
    ``arguments`` (a null ``arguments`` is judged as empty text, never filled in). ``tools``: the
    tool set of the whole batch (anything ``Mender`` accepts: a list of tool dicts in OpenAI,
    Anthropic or MCP form, their JSON text, or a ``Mender``); when it is ``None``, each row's
    tools come from a string column ``tools`` (JSON text; rows with the same text share one
    ``Mender``). ``options``: ``Mender``'s keywords (``model``, ``recover``, limits). Columns
    already named like a result column are replaced.
    """
    import pyarrow as pa

    if not isinstance(batch, (pa.RecordBatch, pa.Table)):
        raise TypeError(f"repair_calls takes a pyarrow RecordBatch or Table, not {type(batch).__name__}")
    for column in ("name", "arguments"):
        if column not in batch.schema.names:
            raise ValueError(f"repair_calls needs a {column!r} column; the batch has {batch.schema.names}")
    names = batch.column("name").to_pylist()
    arguments = batch.column("arguments").to_pylist()
    if tools is not None:
        status, repaired, offsets, kinds, paths, error = _mender(tools, options).repair_many(names, arguments)
    elif "tools" in batch.schema.names:
        status, repaired, offsets, kinds, paths, error = _per_row_tools(
            batch.column("tools").to_pylist(), names, arguments, options
        )
    else:
        raise ValueError("repair_calls needs tools=... or a 'tools' column (JSON text per row)")
    types = result_schema()
    entries = pa.StructArray.from_arrays(
        [pa.array(kinds, pa.string()), pa.array(paths, pa.string())], names=["kind", "path"]
    )
    added = {
        "status": pa.array(status, types["status"]),
        "arguments_repaired": pa.array(repaired, types["arguments_repaired"]),
        # Built from the flat lists and their offsets: no Python object per repair.
        "repairs": pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), entries).cast(types["repairs"]),
        "error": pa.array(error, types["error"]),
    }
    keep = [n for n in batch.schema.names if n not in added]
    columns = [batch.column(n) for n in keep] + list(added.values())
    names_out = keep + list(added)
    if isinstance(batch, pa.Table):
        return pa.Table.from_arrays(columns, names=names_out)
    return pa.RecordBatch.from_arrays(columns, names=names_out)


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

    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        return column.to_pylist()
    return [None if v is None else json.dumps(_without_nulls(v)) for v in column.to_pylist()]


def _id_column(column):
    """Line ids as text: a string as is, anything else as its JSON (as ``toolmend turns``)."""
    return [v if v is None or isinstance(v, str) else json.dumps(v) for v in column.to_pylist()]


def run_turns(batch, tools=None, **options):
    """Runs every assistant turn of an Arrow batch; returns the batch with the result columns.

    ``batch``: a ``pyarrow.RecordBatch`` or ``pyarrow.Table``, one row per line of the
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
    released; compiled tool sets are cached across batches.
    """
    import pyarrow as pa

    rows, defaults = _turn_inputs(batch, tools, options, "run_turns")
    out = run_turn_rows(rows, defaults)
    added = _turn_columns(out)
    names = batch.schema.names
    keep = [n for n in names if n not in added]
    columns = [batch.column(n) for n in keep] + list(added.values())
    names_out = keep + list(added)
    if isinstance(batch, pa.Table):
        return pa.Table.from_arrays(columns, names=names_out)
    return pa.RecordBatch.from_arrays(columns, names=names_out)


def _turn_inputs(batch, tools, options, caller):
    """``run_turn_rows``' two arguments for ``batch``: its columns as lists, and the defaults
    (``tools``, the keywords); ``caller`` names the public function in errors."""
    import pyarrow as pa

    if not isinstance(batch, (pa.RecordBatch, pa.Table)):
        raise TypeError(f"{caller} takes a pyarrow RecordBatch or Table, not {type(batch).__name__}")
    unknown = sorted(set(options) - set(_TURN_OPTIONS))
    if unknown:
        raise TypeError(f"{caller}() got unexpected keyword arguments {unknown}; it takes {list(_TURN_OPTIONS)}")
    names = batch.schema.names
    if "message" not in names:
        raise ValueError(f"{caller} needs a 'message' column; the batch has {names}")
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
    if tools is not None and not isinstance(tools, str):
        tools = json.dumps(tools)
    defaults = {
        "tools": tools,
        "recover": options.get("recover"),
        "model": options.get("model"),
        "max_reprompts": options.get("max_reprompts"),
        "include_values": bool(options.get("include_values", False)),
    }
    return rows, defaults


def _turn_columns(out):
    """Arrow arrays from ``run_turn_rows``'s flat lists (no Python object per call or repair)."""
    import pyarrow as pa

    types = turn_result_schema()
    call_type = types["calls"].value_type
    failed = pa.array([e is not None for e in out["error"]], pa.bool_())
    string = pa.string()

    def lists(offsets, values):
        return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values)

    repairs = lists(
        out["repair_offsets"],
        pa.StructArray.from_arrays(
            [pa.array(out["repair_kind"], string), pa.array(out["repair_path"], string)], names=["kind", "path"]
        ),
    )
    calls = pa.StructArray.from_arrays(
        [
            pa.array(out["call_id"], string),
            pa.array(out["call_name"], string),
            pa.array(out["call_origin"], string),
            pa.array(out["call_status"], string),
            pa.array(out["call_arguments"], string),
            pa.array(out["call_arguments_text"], string),
            repairs.cast(call_type.field("repairs").type),
            lists(out["note_offsets"], pa.array(out["notes"], string)),
            pa.array(out["call_outcome"], string),
            pa.array(out["call_error"], string),
            pa.array(out["call_native_index"], pa.int64()),
        ],
        fields=list(call_type),
    )
    report = pa.StructArray.from_arrays(
        [pa.array(out["report"][name], pa.int64()) for name in _REPORT_FIELDS],
        fields=list(types["report"]),
        mask=failed,
    )
    return {
        "error": pa.array(out["error"], string),
        "content": pa.array(out["content"], string),
        "reasoning": pa.array(out["reasoning"], string),
        "calls": pa.ListArray.from_arrays(pa.array(out["call_offsets"], pa.int32()), calls, mask=failed).cast(
            types["calls"]
        ),
        "report": report,
    }


def audit(data, tools=None, **options):
    """Where models break: ``toolmend audit``'s counts over turn rows, as a ``pyarrow.Table``.

    ``data``: a ``pyarrow.Table`` or ``RecordBatch`` of ``run_turns`` rows, or an iterable of
    them; ``tools``: the tool set of rows that carry none; ``options``: ``max_keys`` and
    ``run_turns``' keywords. One row per dimension (``total``, ``model``, ``tool``, ``kind``)
    and key; see ``toolmend.audit`` for the columns.
    """
    from .audit import audit as _audit

    return _audit(data, tools, **options)
