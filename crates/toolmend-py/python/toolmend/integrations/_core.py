"""What every framework adapter shares: a cached ``Mender`` per tool set, history repair, logging.

An adapter turns its framework's tool objects into OpenAI-form tool dicts, asks ``MenderCache``
for the ``Mender`` of that tool set (built once, reused while the set is unchanged), and mends each
call with ``Mender.repair_call``. A call that parses and validates comes back ``valid`` and the
adapter keeps the framework's own object, so its bytes never change.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections import OrderedDict
from typing import Any, Dict, Iterable, List, Optional, Tuple

from .._toolmend import Call, Mender, ToolSet

__all__ = [
    "HistoryCounts",
    "MenderCache",
    "call_summary",
    "history_arguments",
    "log_calls",
    "new_call_id",
    "openai_tool",
]

#: Tool sets kept per cache (an agent has one or a few; a gateway sees one per client app).
DEFAULT_CACHE_SIZE = 64


def openai_tool(name: str, parameters: Optional[Dict[str, Any]], description: str = "") -> dict:
    """One tool in the OpenAI Chat Completions form, the form every adapter hands to toolmend."""
    function: Dict[str, Any] = {"name": name, "parameters": parameters or {"type": "object"}}
    if description:
        function["description"] = description
    return {"type": "function", "function": function}


class MenderCache:
    """The ``Mender`` (and ``ToolSet``, for text recovery) of each tool set, built once.

    Keyed by the tool set's canonical JSON, bounded to ``maxsize`` sets (least recently used
    dropped first); safe to share across threads, as ``Mender`` itself is.
    """

    def __init__(self, *, maxsize: int = DEFAULT_CACHE_SIZE, **options: Any) -> None:
        self._maxsize = max(1, maxsize)
        self._options = options
        self._entries: "OrderedDict[str, Tuple[Mender, ToolSet]]" = OrderedDict()
        self._lock = threading.Lock()
        self._last: Optional[Tuple[Any, Tuple[Mender, ToolSet]]] = None

    def get(self, tools: List[dict]) -> Tuple[Mender, ToolSet]:
        """The mender and tool set for ``tools`` (OpenAI-form dicts)."""
        key = json.dumps(tools, sort_keys=True, separators=(",", ":"), default=str)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                return entry
        entry = (Mender(tools, **self._options), ToolSet(tools))
        with self._lock:
            self._entries[key] = entry
            while len(self._entries) > self._maxsize:
                self._entries.popitem(last=False)
        return entry

    def get_for(self, source: Any, build: Any) -> Tuple[Mender, ToolSet]:
        """Like ``get(build(source))``, but skips building the key while ``source`` holds the very
        objects seen last (an agent passes the same tools on every turn)."""
        key = tuple(source) if isinstance(source, (list, tuple)) else (source,)
        last = self._last
        # Identity of each tool object, not equality: frameworks hand the same tool objects to
        # every request (often in a new list), and holding them keeps their ids from being reused.
        if last is not None and len(last[0]) == len(key) and all(
                a is b for a, b in zip(last[0], key)):
            return last[1]
        entry = self.get(build(source))
        self._last = (key, entry)
        return entry

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"MenderCache(tool_sets={len(self._entries)}, maxsize={self._maxsize})"


def new_call_id(prefix: str = "call_") -> str:
    """An id for a call that had none (one recovered from text)."""
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def call_summary(call: Call) -> dict:
    """What the logs and the frameworks' metadata record of one mended call."""
    out: Dict[str, Any] = {"id": call.id, "name": call.name, "status": call.status}
    if call.repairs:
        out["repairs"] = [f"{r.kind}@{r.path}" if r.path else r.kind for r in call.repairs]
    if call.error:
        out["error"] = call.error
    return out


def log_calls(logger: logging.Logger, where: str, calls: Iterable[Call]) -> List[dict]:
    """Logs each call toolmend changed or could not save; returns their summaries."""
    summaries = []
    for call in calls:
        if call.status == "valid":
            continue
        summary = call_summary(call)
        summaries.append(summary)
        if call.dispatchable:
            logger.info("toolmend %s: %s call %s %s", where, call.status, call.name,
                        ", ".join(summary.get("repairs", [])))
        else:
            logger.warning("toolmend %s: %s call %s: %s", where, call.status, call.name, call.error)
    return summaries


class HistoryCounts:
    """How many history calls were repaired or sent as ``{}``."""

    __slots__ = ("repaired", "emptied")

    def __init__(self) -> None:
        self.repaired = 0
        self.emptied = 0

    def __bool__(self) -> bool:
        return bool(self.repaired or self.emptied)

    def to_dict(self) -> dict:
        return {"repaired": self.repaired, "emptied": self.emptied}

    def __repr__(self) -> str:
        return f"HistoryCounts(repaired={self.repaired}, emptied={self.emptied})"


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, TypeError):
        return False


def history_arguments(
    mender: Mender, name: str, text: Any, counts: Optional[HistoryCounts] = None
) -> Optional[str]:
    """The arguments text to send for an assistant tool call already in the history, or ``None``
    to keep the call's own bytes.

    A JSON object is kept as sent (the provider accepts it, and it is what the tool ran with).
    Anything else (``""``, a cut-off object, a non-object) makes providers reject the whole
    request, so it becomes the repaired arguments when toolmend can save the call, else ``{}``.
    """
    if isinstance(text, dict):
        return None
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    if text and _is_json_object(text):
        return None
    call = mender.repair_call(name, text)
    if call.dispatchable and call.status != "valid":
        if counts is not None:
            counts.repaired += 1
        return call.arguments_text
    if call.status == "valid":
        return None
    if counts is not None:
        counts.emptied += 1
    return "{}"
