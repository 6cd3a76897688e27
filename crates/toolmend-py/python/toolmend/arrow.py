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
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any, Dict, Tuple

from ._toolmend import Mender

__all__ = ["repair_calls", "result_schema"]

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
