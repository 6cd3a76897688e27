"""json_repair-compatible functions: ``repair_json``, ``loads``, ``load``, ``from_file``.

Same signatures and return conventions as the ``json_repair`` package, so that
``import toolmend as json_repair`` (or ``from toolmend import repair_json``) works in existing
code. Any JSON root is accepted (objects, arrays, strings, numbers, literals); a text the
document ended inside is closed (the ``close`` truncation policy).

Valid JSON comes back as ``json.loads`` reads it (toolmend's parser tries a strict parse first;
what only ``json.loads`` accepts, such as ``NaN``, goes to ``json.loads`` unless
``skip_json_loads``). Broken JSON is read by toolmend's lenient parser (``toolmend.salvage_json``).

Differences from json_repair, on purpose (toolmend never invents content):

- Where toolmend refuses to guess, the result is ``""``, json_repair's answer for a text it
  cannot repair: prose without JSON, ``...`` placeholders, prose as a value
  (``{"a": sic tamet. "b": 1}``, ``{"a": ipsum, sic}``), words another notation gives a
  meaning (``{"a": yes}``), missing values (``{"a": }``), ``NaN``/``Infinity``, a text cut
  inside a key or literal that keeps nothing.
- Like json_repair, raw line breaks right before a string's closing quote are layout
  (dropped), and ``.25``, ``1.``, ``82_461_110`` are numbers; ``1/3``, ``10-20``, a UUID are
  kept as the strings they spell (``salvage_json``'s ``trim_layout`` and ``lenient_scalars``);
  so are Python tuples and sets (``(1, 2)``, ``{'a', 'b'}`` as lists) and unquoted words on
  one line as a value (``{"name": John}``, ``{"city": New York}``). ``1e`` before a delimiter
  is ``1``.
- Like json_repair, misplaced quotes and a missing ``{`` are read where only one reading
  holds: ``["key": "value"]`` is ``[{"key": "value"}]``, ``{"key:"value"}`` and
  ``{"key:value}`` are ``{"key": "value"}``, ``{"k"e"y": 1}`` keeps its quotes in the key,
  ``{"a": abc", "n": 5"}`` is ``{"a": "abc", "n": 5}``.
- ``logging=True`` returns ``(value, log)`` where each log entry is
  ``{"text": <repair kind>, "context": <byte offset>}`` (toolmend's repair names).
- ``strict=True`` raises ``ValueError`` whenever the text needed any repair.
- ``schema`` and ``schema_repair_mode="salvage"`` are not supported (``NotImplementedError``);
  use ``toolmend.Mender``, which validates against a JSON Schema.
- ``stream_stable`` is json_repair's: by default (``False``) a string the text ends inside
  loses its trailing blanks and keeps a backslash it ends on (``"val\\n`` → ``"val"``,
  ``"val\\`` → ``"val\\\\"``); ``True`` keeps exactly what was read, so a stream's growing
  prefixes read as growing values. ``chunk_length`` is accepted and has no effect.
- A bare ``True``, ``False`` or ``None`` as the whole text gives ``""``, as in json_repair
  (inside a container they are the literals they spell).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any, List, Optional, Tuple, Union

from ._toolmend import SalvageError, loads_document, loads_strict, repair_document, salvage_values

JSONReturnType = Union[dict, list, str, int, float, bool, None]

__all__ = ["JSONReturnType", "from_file", "load", "loads", "repair_json", "salvage_json"]


def _same_shape(a: Any, b: Any) -> bool:
    """json_repair's test for a later top-level value that updates an earlier one."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(k in b and _same_shape(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_shape(x, y) for x, y in zip(a, b))
    return True


def _comma_before(text: str, count: int) -> List[bool]:
    """For each of the ``count`` top-level values after the first: whether a ``,`` separates it
    from the one before (``{…}, {…}``). All ``False`` when the text's top-level containers
    cannot be told plainly (quotes that do not pair, braces in prose, another count)."""
    unknown = [False] * (count - 1)
    commas: List[bool] = []
    depth, i, n = 0, 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'" and depth > 0:
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                return unknown
            i = j + 1
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth < 0:
                return unknown
            if depth == 0:
                # Where the next top-level value starts, and what lies between.
                k = i + 1
                while k < n and text[k].isspace():
                    k += 1
                commas.append(k < n and text[k] == ",")
        i += 1
    # One entry per top-level container: the last one's separator is no separator.
    return commas[: count - 1] if len(commas) == count else unknown


def _combine(values: list, text: str = "") -> Any:
    """Several top-level values as json_repair returns them: one value alone; a later value
    of the same shape replaces the earlier (an update) unless a comma separates them (a list
    of values, ``{…}, {…}``); empty values give way to later ones."""
    if len(values) == 1:
        return values[0]
    commas = _comma_before(text, len(values)) if text else [False] * (len(values) - 1)
    out = [values[0]]
    for v, comma in zip(values[1:], commas):
        if not v:
            continue
        if (_same_shape(out[-1], v) and not comma) or not out[-1]:
            out.pop()
        out.append(v)
    return out[0] if len(out) == 1 else out


def salvage_json(
    text: str,
    *,
    truncation: str = "close",
    max_bytes: Optional[int] = None,
    max_depth: Optional[int] = None,
    trim_layout: bool = True,
    lenient_scalars: bool = True,
    trim_cut_strings: bool = False,
) -> Tuple[Any, List[Tuple[str, int]], bool]:
    """Reads any JSON document leniently: ``(value, repairs, truncated)``.

    ``repairs`` lists ``(kind, byte offset)`` (toolmend's repair names); ``truncated`` says the
    text ended inside the value, which was closed (``truncation="close"``; ``"refuse"`` raises
    instead). Several values back to back combine as json_repair combines them. Raises a
    ``SalvageError`` subclass (``NoJsonError``, ``JsonSyntaxError``, ``NonFiniteError``,
    ``TooLargeError``, ``TooDeepError``) with ``kind``, ``offset``, ``line``, ``column``.

    Two document readings, on by default (tool calls never use them):

    - ``trim_layout``: raw line breaks and the blanks around them right before a string's
      closing quote are layout and dropped (``"text⏎"`` reads as ``"text"``); an escaped
      ``\\n`` is content and stays.
    - ``lenient_scalars``: Python number spellings (``.25``, ``1.``, ``+1``, ``82_461_110``)
      are numbers, ``TRUE``/``Null`` literals, and a bare token that starts with a digit and
      ends at ``,``/``}``/``]`` (``1/3``, ``10-20``, a UUID) is the string it spells; Python
      tuples and sets are lists (``(1, 2)``, ``{'a', 'b'}``), one unquoted word as a value is
      a string (``{"name": John}``), ``{foo: [}`` is closed and ``\\„`` is ``„``.

    ``trim_cut_strings`` (off by default here, on in ``repair_json``/``loads`` unless
    ``stream_stable=True``): a string the text ends inside loses its trailing blanks and keeps
    a backslash it ends on, json_repair's default reading of a cut text.
    """
    values, repairs, truncated = salvage_values(
        text,
        truncation=truncation,
        max_bytes=max_bytes,
        max_depth=max_depth,
        trim_layout=trim_layout,
        lenient_scalars=lenient_scalars,
        trim_cut_strings=trim_cut_strings,
    )
    return _combine(values, text), repairs, truncated


# Python's literals as a whole text: json_repair reads them only inside a container.
_BARE_LITERALS = ("True", "False", "None")


def _parse(
    text: str,
    skip_json_loads: bool,
    logging: bool,
    strict: bool,
    broken: bool = False,
    stream_stable: bool = False,
) -> Any:
    """The value and its repair log; ``""`` (and no log) when toolmend refuses the text.
    ``broken``: ``loads_strict`` found the text not strict JSON (no second strict attempt)."""
    if text.strip() in _BARE_LITERALS:
        if strict:
            raise ValueError(f"a bare {text.strip()} is not JSON")
        return "", []
    try:
        values, repairs, _truncated = salvage_values(
            text, broken=broken, trim_cut_strings=not stream_stable
        )
        value = _combine(values, text)
    except SalvageError as err:
        # What json.loads accepts and toolmend's strict parse does not (NaN, Infinity, nesting
        # deeper than toolmend's limit) is still valid JSON for json_repair.
        if not skip_json_loads:
            try:
                return json.loads(text), []
            except ValueError:
                pass
        if strict:
            raise ValueError(str(err)) from err
        return "", []
    if strict and repairs:
        raise ValueError(f"the JSON needed repairs: {', '.join(k for k, _ in repairs)}")
    return value, [{"text": kind, "context": str(offset)} for kind, offset in repairs]


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

    Valid JSON comes back as ``json.loads`` reads it; broken JSON is repaired by toolmend. A
    text toolmend cannot read without guessing gives ``""``. With ``return_objects=False`` the
    value is serialised by ``json.dumps(value, **json_dumps_args)`` (``ensure_ascii=True`` by
    default, as in json_repair); a value equal to ``""`` is returned as ``""``.
    ``logging=True`` returns ``(value, repair_log)``.
    """
    if (
        type(json_str) is str
        and not (logging or strict or json_dumps_args)
        and json_fd is None
        and schema is None
        and schema_repair_mode == "standard"
    ):
        # The common case in one call into Rust (the same answer as below); NotImplemented
        # for what only this path answers (several values, a refused text).
        answer = loads_document(json_str, stream_stable) if return_objects else repair_document(json_str, stream_stable)
        if answer is not NotImplemented:
            return answer
    if schema is not None or schema_repair_mode not in ("standard", None):
        raise NotImplementedError(
            "toolmend.repair_json has no schema mode; use toolmend.Mender for schema-guided repair"
        )
    if json_fd is not None:
        json_str = json_fd.read()
    if not isinstance(json_str, str):
        raise TypeError(f"json_str must be str, not {type(json_str).__name__}")
    broken = False
    if not logging:
        # Strict JSON read straight into Python objects (the same value the parser gives).
        parsed = loads_strict(json_str)
        broken = parsed is ...
        if parsed is not ... and parsed is not NotImplemented:
            if return_objects:
                return parsed
            return "" if parsed == "" else json.dumps(parsed, **json_dumps_args)
    # Strict JSON is tried first (as json_repair tries json.loads), so valid JSON costs one
    # parse, not a failed json.loads and then a repair.
    parsed, log = _parse(json_str, skip_json_loads, logging, strict, broken, stream_stable)
    if logging:
        return parsed, log
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
    if type(json_str) is str and not (logging or strict) and schema is None and schema_repair_mode == "standard":
        # The common case in one call into Rust (the same value as below); NotImplemented for
        # what only the path below answers (several values, a refused text).
        parsed = loads_document(json_str, stream_stable)
        if parsed is not NotImplemented:
            return parsed
    if not logging and schema is None and schema_repair_mode == "standard" and type(json_str) is str:
        # Valid JSON without the layers below (the same value); other text straight to the
        # parser (not a second strict attempt in repair_json).
        parsed = loads_strict(json_str)
        if parsed is ...:
            return _parse(json_str, skip_json_loads, False, strict, True, stream_stable)[0]
        if parsed is NotImplemented:
            return _parse(json_str, skip_json_loads, False, strict, False, stream_stable)[0]
        return parsed
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
