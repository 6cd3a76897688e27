"""Repairing the responses of the ``openai`` and ``anthropic`` Python SDKs in place.

Each helper takes the response object and the request's ``tools`` (a list in any form, or a
``ToolSet``), or a ``mender`` built once and shared; it rewrites what toolmend repaired and
returns the ``TurnResult`` (or list of ``Call``) so the caller can see what changed and send
``call.error`` back to the model for a call that could not be saved. Calls that stay invalid are
left as the model sent them. Neither SDK is imported unless its helper needs to build a new
object (a call recovered from text).
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Iterable, Iterator, Optional

from ._toolmend import Call, Mender, Session, ToolSet, TurnResult

__all__ = ["repair_anthropic_message", "repair_chat_completion", "repair_chat_stream"]


def _mender(tools: Any, mender: Optional[Mender], recover: str) -> Mender:
    if mender is not None:
        return mender
    if tools is None:
        raise TypeError("pass the request's tools (or a Mender)")
    return Mender(tools, recover=recover)


def _message_dict(message: Any) -> dict:
    if isinstance(message, dict):
        return message
    return message.model_dump(mode="json", exclude_unset=False)


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _set(obj: Any, key: str, value: Any) -> None:
    if isinstance(obj, dict):
        obj[key] = value
    else:
        setattr(obj, key, value)


def _new_openai_tool_call(call: Call, sdk_objects: bool) -> Any:
    call_id = call.id or f"call_{uuid.uuid4().hex[:24]}"
    if not sdk_objects:
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments_text},
        }
    try:  # openai >= 1.99
        from openai.types.chat.chat_completion_message_function_tool_call import (  # type: ignore
            ChatCompletionMessageFunctionToolCall as ToolCall,
            Function,
        )
    except ImportError:  # older openai
        from openai.types.chat.chat_completion_message_tool_call import (  # type: ignore
            ChatCompletionMessageToolCall as ToolCall,
            Function,
        )

    return ToolCall(
        id=call_id,
        type="function",
        function=Function(name=call.name, arguments=call.arguments_text),
    )


def _apply_openai(message: Any, result: TurnResult, sdk_objects: bool) -> None:
    native = list(_get(message, "tool_calls") or [])
    out: list = []
    seen = set()
    for call in result.calls:
        if call.native_index is not None and call.native_index not in seen:
            seen.add(call.native_index)
            tool_call = native[call.native_index]
            if call.dispatchable:
                function = _get(tool_call, "function")
                _set(function, "arguments", call.arguments_text)
                _set(function, "name", call.name)
            out.append(tool_call)
        elif call.dispatchable:
            # A second call split out of one native call, or a call recovered from the text.
            out.append(_new_openai_tool_call(call, sdk_objects))
    # Native calls the turn dropped (duplicates) are dropped here too; others stay as sent.
    if out or native:
        _set(message, "tool_calls", out or None)
    if result.content != _get(message, "content"):
        _set(message, "content", result.content)


def repair_chat_completion(
    completion: Any,
    tools: Any = None,
    *,
    mender: Optional[Mender] = None,
    session: Optional[Session] = None,
    recover: str = "content",
) -> list:
    """Repairs an OpenAI ``ChatCompletion`` (SDK object or dict) in place.

    Each choice's ``message.tool_calls`` get their repaired ``arguments`` (and name); calls the
    model wrote as text are added as tool calls and their markup removed from ``content``.
    Returns one ``TurnResult`` per choice.
    """
    m = _mender(tools, mender, recover)
    s = session if session is not None else Session()
    results = []
    for choice in _get(completion, "choices") or []:
        message = _get(choice, "message")
        result = m.run_turn(
            s, _message_dict(message), finish_reason=_get(choice, "finish_reason")
        )
        _apply_openai(message, result, not isinstance(message, dict))
        if _get(message, "tool_calls") and _get(choice, "finish_reason") == "stop":
            _set(choice, "finish_reason", "tool_calls")
        results.append(result)
    return results


def repair_chat_stream(
    chunks: Iterable[Any],
    tools: Any = None,
    *,
    mender: Optional[Mender] = None,
    session: Optional[Session] = None,
    results: Optional[list] = None,
) -> Iterator[Any]:
    """Repairs an OpenAI chat completion stream (``ChatCompletionChunk`` objects or dicts).

    Content deltas pass through as they arrive. Tool-call argument deltas are held back; on the
    chunk that carries ``finish_reason``, each call's whole repaired arguments are sent as one
    delta (name and id included) before that chunk. ``results``, when given, receives the
    ``TurnResult`` of each choice.
    """
    m = _mender(tools, mender, "off")
    s = session if session is not None else Session()
    pending: dict = {}  # choice index -> {tool index: {"id", "name", "arguments"}}
    for chunk in chunks:
        for choice in _get(chunk, "choices") or []:
            index = _get(choice, "index") or 0
            delta = _get(choice, "delta")
            calls = _get(delta, "tool_calls") if delta is not None else None
            if calls:
                held = pending.setdefault(index, {})
                for tc in calls:
                    entry = held.setdefault(_get(tc, "index") or 0, {"id": "", "name": "", "arguments": ""})
                    function = _get(tc, "function")
                    entry["id"] = _get(tc, "id") or entry["id"]
                    if function is not None:
                        entry["name"] += _get(function, "name") or ""
                        entry["arguments"] += _get(function, "arguments") or ""
                _set(delta, "tool_calls", None)
            finish = _get(choice, "finish_reason")
            if finish is not None and index in pending:
                held = pending.pop(index)
                message = {
                    "content": None,
                    "tool_calls": [
                        {"id": e["id"], "function": {"name": e["name"], "arguments": e["arguments"]}}
                        for _, e in sorted(held.items())
                    ],
                }
                result = m.run_turn(s, message, finish_reason=finish)
                if results is not None:
                    results.append(result)
                _apply_openai(message, result, False)
                repaired = [
                    {
                        "index": i,
                        "id": tc["id"],
                        "type": "function",
                        "function": {
                            "name": tc["function"]["name"],
                            "arguments": tc["function"]["arguments"],
                        },
                    }
                    for i, tc in enumerate(message["tool_calls"] or [])
                ]
                yield _calls_chunk(chunk, index, repaired)
        yield chunk


def _calls_chunk(like: Any, index: int, tool_calls: list) -> Any:
    """A chunk like ``like`` whose only choice carries ``tool_calls`` and no finish reason."""
    if isinstance(like, dict):
        out = {k: v for k, v in like.items() if k != "choices"}
        out["choices"] = [{"index": index, "delta": {"tool_calls": tool_calls}, "finish_reason": None}]
        return out
    data = like.model_dump(mode="json", exclude_unset=True)
    data["choices"] = [{"index": index, "delta": {"tool_calls": tool_calls}, "finish_reason": None}]
    return type(like).model_validate(data)


def repair_anthropic_message(
    message: Any,
    tools: Any = None,
    *,
    mender: Optional[Mender] = None,
) -> list:
    """Repairs the ``tool_use`` blocks of an Anthropic ``Message`` (SDK object or dict) in place.

    Each block's ``input`` (a dict, or a string some gateways send) is validated against its
    tool's schema and replaced by the repaired arguments. Returns one ``Call`` per block.
    """
    m = _mender(tools, mender, "off")
    calls = []
    for block in _get(message, "content") or []:
        if _get(block, "type") != "tool_use":
            continue
        raw = _get(block, "input")
        text = raw if isinstance(raw, str) else json.dumps(raw)
        call = m.repair_call(_get(block, "name"), text)
        if call.dispatchable:
            _set(block, "input", call.arguments)
            _set(block, "name", call.name)
        calls.append(call)
    return calls
