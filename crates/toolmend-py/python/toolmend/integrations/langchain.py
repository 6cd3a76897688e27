"""LangChain v1: an agent middleware and a function that mend the tool calls of an ``AIMessage``.

``ToolmendMiddleware(tools)`` goes in ``create_agent(..., middleware=[...])``; its ``after_model``
hook turns ``invalid_tool_calls`` (arguments the model's parser could not read) into ``tool_calls``
and repairs ``tool_calls`` whose ``args`` fail the tool's schema, before the agent routes to its
tools. A call that cannot be saved is answered with a ``ToolMessage`` carrying toolmend's retry
message and the agent goes back to the model (at most ``max_retries`` times per user turn), where
LangChain alone would end the run or answer "arguments were malformed". ``repair_ai_message`` does
the same to one message, for LangGraph graphs and older chains.

Repairs are logged on the ``toolmend.integrations.langchain`` logger and recorded in the message's
``response_metadata["toolmend"]``, so they show in LangSmith traces.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Dict, List, Optional, Sequence, Tuple

from langchain.agents.middleware import AgentMiddleware, hook_config
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from .._toolmend import Call, Mender, ToolSet, recover as _recover
from ._core import MenderCache, log_calls, new_call_id

__all__ = ["ToolmendMiddleware", "repair_ai_message", "tool_schemas"]

logger = logging.getLogger(__name__)

#: Marks the retry ``ToolMessage``s this middleware adds, so it can count them.
RETRY_MARK = "toolmend_retry"


def tool_schemas(tools: Sequence[Any]) -> List[dict]:
    """The OpenAI-form tool dicts of LangChain tools (``BaseTool``, ``@tool`` functions, plain
    functions, pydantic models or dicts), as LangChain itself binds them to a model."""
    return [convert_to_openai_tool(t) for t in tools]


_default_cache = MenderCache(recover="content")


def _mender_for(
    tools: Optional[Sequence[Any]], mender: Optional[Mender]
) -> Tuple[Mender, Optional[ToolSet]]:
    if mender is not None:
        # Text recovery needs the tool set itself; a bare mender mends native calls only.
        return mender, (ToolSet(tool_schemas(tools)) if tools is not None else None)
    if tools is None:
        raise TypeError("pass the agent's tools (or a Mender)")
    return _default_cache.get_for(tools, tool_schemas)


def _args_text(args: Any) -> str:
    if isinstance(args, str):
        return args
    return json.dumps(args if args is not None else {}, ensure_ascii=False)


def repair_ai_message(
    message: AIMessage,
    tools: Optional[Sequence[Any]] = None,
    *,
    mender: Optional[Mender] = None,
    recover: bool = True,
) -> Tuple[AIMessage, List[Call]]:
    """Mends the tool calls of ``message`` against ``tools`` (LangChain tools or dicts).

    Returns ``(message, calls)``: the same object when nothing changed, else a copy (same ``id``)
    whose ``tool_calls`` hold every call toolmend could save and whose ``invalid_tool_calls`` hold
    the rest, each with toolmend's retry message as ``error``. With ``recover``, calls the model
    wrote as text (Hermes ``<tool_call>``, …) in a message without tool calls become tool calls
    and their markup leaves the content. ``calls`` has one ``Call`` per call looked at.
    """
    m, toolset = _mender_for(tools, mender)
    calls: List[Call] = []
    changed = False
    tool_calls: List[dict] = []
    invalid: List[dict] = []
    for tc in message.tool_calls:
        call = m.repair_call(tc["name"], _args_text(tc.get("args")))
        calls.append(call)
        if call.status == "valid" or call.status == "unvalidated":
            tool_calls.append(tc)
        elif call.dispatchable:
            tool_calls.append({**tc, "name": call.name, "args": call.arguments})
            changed = True
        else:
            invalid.append({"type": "invalid_tool_call", "name": tc["name"], "id": tc.get("id"),
                            "args": _args_text(tc.get("args")), "error": call.error})
            changed = True
    for itc in message.invalid_tool_calls:
        name = itc.get("name")
        if not name:
            invalid.append(itc)
            continue
        call = m.repair_call(name, itc.get("args") or "")
        calls.append(call)
        changed = True
        if call.dispatchable:
            tool_calls.append({"type": "tool_call", "name": call.name, "args": call.arguments,
                               "id": itc.get("id") or new_call_id()})
        else:
            invalid.append({**itc, "error": call.error or itc.get("error")})
    content = message.content
    if (recover and toolset is not None and not tool_calls and not invalid
            and isinstance(content, str) and content):
        found = _recover(content, toolset)
        saved = []
        for rc in found.calls:
            call = m.repair_call(rc.name, rc.arguments)
            calls.append(call)
            if call.dispatchable:
                saved.append({"type": "tool_call", "name": call.name, "args": call.arguments,
                              "id": new_call_id()})
        if saved:
            tool_calls, content, changed = saved, found.text, True
    if not changed:
        return message, calls
    metadata = dict(message.response_metadata or {})
    metadata["toolmend"] = {"calls": log_calls(logger, "langchain", calls)}
    fixed = message.model_copy(update={
        "content": content, "tool_calls": tool_calls, "invalid_tool_calls": invalid,
        "response_metadata": metadata,
    })
    return fixed, calls


def _retries_this_turn(messages: Sequence[Any]) -> int:
    count = 0
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            break
        if isinstance(message, ToolMessage) and message.additional_kwargs.get(RETRY_MARK):
            count += 1
    return count


class ToolmendMiddleware(AgentMiddleware):
    """Mends each model response's tool calls before ``create_agent`` routes them to the tools.

    ``tools`` are the agent's tools (the list given to ``create_agent``); the ``Mender`` of that
    set is built once. ``max_retries`` bounds how often per user turn a call toolmend cannot save
    sends the agent back to the model with the retry message (0: never; the call is then left in
    ``invalid_tool_calls`` as LangChain would).
    """

    def __init__(self, tools: Sequence[Any], *, recover: bool = True, max_retries: int = 2) -> None:
        super().__init__()
        self._mender, _ = _default_cache.get_for(tools, tool_schemas)
        self._recover = recover
        self._max_retries = max_retries

    @property
    def mender(self) -> Mender:
        """The mender of the agent's tools (its ``stats()`` count every call seen)."""
        return self._mender

    def __repr__(self) -> str:
        return (f"ToolmendMiddleware(tools={self._mender.tool_names!r}, "
                f"max_retries={self._max_retries})")

    def _update(self, state: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        messages = state.get("messages") or []
        if not messages or not isinstance(messages[-1], AIMessage):
            return None
        fixed, _ = repair_ai_message(messages[-1], mender=self._mender, recover=self._recover)
        if fixed is messages[-1]:
            return None
        update: Dict[str, Any] = {"messages": [fixed]}
        unsaved = [itc for itc in fixed.invalid_tool_calls if itc.get("error") and itc.get("id")]
        if unsaved and _retries_this_turn(messages) < self._max_retries:
            update["messages"] += [
                ToolMessage(content=itc["error"], tool_call_id=itc["id"], name=itc.get("name"),
                            status="error", additional_kwargs={RETRY_MARK: True})
                for itc in unsaved
            ]
            if not fixed.tool_calls:
                update["jump_to"] = "model"
        return update

    @hook_config(can_jump_to=["model"])
    def after_model(self, state: Any, runtime: Any) -> Optional[Dict[str, Any]]:
        return self._update(state)

    @hook_config(can_jump_to=["model"])
    async def aafter_model(self, state: Any, runtime: Any) -> Optional[Dict[str, Any]]:
        return self._update(state)
