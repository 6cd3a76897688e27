"""json_repair-compatible functions: ``repair_json``, ``loads``, ``load``, ``from_file``.

Same signatures and return conventions as the ``json_repair`` package, so that
``import toolmend as json_repair`` (or ``from toolmend import repair_json``) works in existing
code. Any JSON root is accepted (objects, arrays, strings, numbers, literals); a text the
document ended inside is closed (the ``close`` truncation policy).

Valid JSON goes through ``json.loads`` first, as in json_repair (unless ``skip_json_loads``).
Broken JSON is read by toolmend's lenient parser (``toolmend.salvage_json``).

Differences from json_repair, on purpose (toolmend never invents content):

- Where toolmend refuses to guess, the result is ``""``, json_repair's answer for a text it
  cannot repair: prose without JSON, ``...`` placeholders, bare words as values
  (``{"a": yes please}``), ``NaN``/``Infinity``, a text cut inside a key or literal that
  keeps nothing.
- ``logging=True`` returns ``(value, log)`` where each log entry is
  ``{"text": <repair kind>, "context": <byte offset>}`` (toolmend's repair names).
- ``strict=True`` raises ``ValueError`` whenever the text needed any repair.
- ``schema`` and ``schema_repair_mode="salvage"`` are not supported (``NotImplementedError``);
  use ``toolmend.Mender``, which validates against a JSON Schema.
- ``stream_stable`` and ``chunk_length`` are accepted and have no effect: the whole text is
  always read, and truncated text is closed the same way at every length.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any, Union

from ._toolmend import SalvageError, salvage_json

JSONReturnType = Union[dict, list, str, int, float, bool, None]

__all__ = ["JSONReturnType", "from_file", "load", "loads", "repair_json"]


def _parse(text: str, logging: bool, strict: bool) -> Any:
    try:
        value, repairs, _truncated = salvage_json(text)
    except SalvageError as err:
        if strict:
            raise ValueError(str(err)) from err
        return ("", []) if logging else ""
    if strict and repairs:
        raise ValueError(f"the JSON needed repairs: {', '.join(k for k, _ in repairs)}")
    if logging:
        return value, [{"text": kind, "context": str(offset)} for kind, offset in repairs]
    return value


def repair_json(
    json_str: str = "",
    return_objects: bool = False,
    skip_json_loads: bool = False,
    logging: bool = False,
    json_fd: IO[str] | None = None,
    chunk_length: int = 0,
    stream_stable: bool = False,
    strict: bool = False,
    schema: Any | None = None,
    schema_repair_mode: str = "standard",
    **json_dumps_args: Any,
) -> Any:
    """Parses ``json_str`` leniently; returns JSON text, or the value with ``return_objects``.

    Valid JSON is parsed by ``json.loads`` (unless ``skip_json_loads``); broken JSON is repaired
    by toolmend. A text toolmend cannot read without guessing gives ``""``. With
    ``return_objects=False`` the value is serialised by ``json.dumps(value, **json_dumps_args)``
    (``ensure_ascii=True`` by default, as in json_repair); a value equal to ``""`` is returned
    as ``""``. ``logging=True`` returns ``(value, repair_log)``.
    """
    if schema is not None or schema_repair_mode not in ("standard", None):
        raise NotImplementedError(
            "toolmend.repair_json has no schema mode; use toolmend.Mender for schema-guided repair"
        )
    if json_fd is not None:
        json_str = json_fd.read()
    if not isinstance(json_str, str):
        raise TypeError(f"json_str must be str, not {type(json_str).__name__}")
    parsed: Any = None
    valid = False
    if not skip_json_loads:
        try:
            parsed = json.loads(json_str)
            valid = True
        except ValueError:
            pass
    if valid:
        if logging:
            return parsed, []
    else:
        parsed = _parse(json_str, logging, strict)
        if logging:
            return parsed
    if return_objects:
        return parsed
    if parsed == "":
        return ""
    return json.dumps(parsed, **json_dumps_args)


def loads(
    json_str: str,
    skip_json_loads: bool = False,
    logging: bool = False,
    stream_stable: bool = False,
    strict: bool = False,
    schema: Any | None = None,
    schema_repair_mode: str = "standard",
) -> Any:
    """Like ``json.loads``, but repairs broken JSON; ``""`` when it cannot be read."""
    return repair_json(
        json_str=json_str,
        return_objects=True,
        skip_json_loads=skip_json_loads,
        logging=logging,
        stream_stable=stream_stable,
        strict=strict,
        schema=schema,
        schema_repair_mode=schema_repair_mode,
    )


def load(
    fd: IO[str],
    skip_json_loads: bool = False,
    logging: bool = False,
    chunk_length: int = 0,
    strict: bool = False,
    schema: Any | None = None,
    schema_repair_mode: str = "standard",
) -> Any:
    """Like ``json.load``, but repairs broken JSON; ``""`` when it cannot be read."""
    return repair_json(
        json_fd=fd,
        chunk_length=chunk_length,
        return_objects=True,
        skip_json_loads=skip_json_loads,
        logging=logging,
        strict=strict,
        schema=schema,
        schema_repair_mode=schema_repair_mode,
    )


def from_file(
    filename: str | Path,
    skip_json_loads: bool = False,
    logging: bool = False,
    chunk_length: int = 0,
    strict: bool = False,
    schema: Any | None = None,
    schema_repair_mode: str = "standard",
) -> Any:
    """Reads and repairs the JSON file at ``filename`` (UTF-8); ``""`` when it cannot be read."""
    with open(filename, encoding="utf-8") as fd:
        return load(
            fd,
            skip_json_loads=skip_json_loads,
            logging=logging,
            chunk_length=chunk_length,
            strict=strict,
            schema=schema,
            schema_repair_mode=schema_repair_mode,
        )
