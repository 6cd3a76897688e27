"""LangChain v1: an agent middleware and a function that mend the tool calls of an ``AIMessage``.

``ToolmendMiddleware()`` goes in ``create_agent(..., middleware=[...])``. Around each model call
it turns ``invalid_tool_calls`` (arguments the model's parser could not read, which
``create_agent`` alone ends the run on) into ``tool_calls`` and repairs ``tool_calls`` whose
``args`` fail the tool's schema, before the agent routes to its tools. A call that cannot be
saved is answered with a ``ToolMessage`` carrying toolmend's retry message and the model is asked
again (at most ``max_retries`` times per model call) where LangChain alone would end the run or
answer "arguments were malformed". Arguments in the history's ``invalid_tool_calls`` that a
provider would reject are repaired (or sent as ``{}``) in the request, not in the agent's
state. ``repair_ai_message`` does the same to one message, for LangGraph graphs and older
chains.

Repairs are logged on the ``toolmend.integrations.langchain`` logger and recorded in the message's
``response_metadata["toolmend"]``, so they show in LangSmith traces.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Dict, List, Optional, Sequence, Tuple

from langchain.agents.middleware import AgentMiddleware, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from .._toolmend import Call, Mender, ToolSet, recover as _recover
from ._core import HistoryCounts, MenderCache, history_arguments, log_calls, new_call_id

__all__ = ["ToolmendMiddleware", "repair_ai_message", "tool_schemas"]

logger = logging.getLogger(__name__)

#: Marks the retry ``ToolMessage``s this middleware adds (in ``additional_kwargs``).
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
    toolset: Optional[ToolSet] = None,
    recover: bool = True,
) -> Tuple[AIMessage, List[Call]]:
    """Mends the tool calls of ``message`` against ``tools`` (LangChain tools or dicts).

    Returns ``(message, calls)``: the same object when nothing changed, else a copy (same ``id``)
    whose ``tool_calls`` hold every call toolmend could save and whose ``invalid_tool_calls`` hold
    the rest, each with toolmend's retry message as ``error``. With ``recover``, calls the model
    wrote as text (Hermes ``<tool_call>``, …) in a message without tool calls become tool calls
    and their markup leaves the content. ``calls`` has one ``Call`` per call looked at.
    """
    if mender is not None and toolset is not None:
        m = mender
    else:
        m, toolset = _mender_for(tools, mender)
    calls: List[Call] = []
    changed = False
    tool_calls: List[dict] = []
    invalid: List[dict] = []
    for tc in message.tool_calls:
        call = m.repair_call(tc["name"], _args_text(tc.get("args")))
        calls.append(call)
        if call.status in ("valid", "unvalidated") or (
                not call.dispatchable and tc["name"] not in m.tool_names):
            # Valid, or a tool toolmend was not given (a structured-output tool the agent binds
            # itself, a provider tool): the call as the model sent it.
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
        if not call.dispatchable and name not in m.tool_names:
            invalid.append(itc)
            continue
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


class ToolmendMiddleware(AgentMiddleware):
    """Mends each model response's tool calls before ``create_agent`` routes them to the tools.

    It wraps the model call (``wrap_model_call``) rather than adding an ``after_model`` node: a
    node of its own costs the graph about a tenth of an agent step (bench/python/
    bench_integrations.py), and wrapping the call also gives it the request's tools. ``tools``
    (the agent's tools) may be given up front; by default they are read from each request, and
    the ``Mender`` of a tool set is built once. ``max_retries`` bounds how often per model call a
    call toolmend cannot save is answered with the retry message and the model asked again
    (0: never; the call is then left in ``invalid_tool_calls`` as LangChain would).
    """

    def __init__(self, tools: Optional[Sequence[Any]] = None, *, recover: bool = True,
                 max_retries: int = 2) -> None:
        super().__init__()
        self._tools = list(tools) if tools is not None else None
        self._recover = recover
        self._max_retries = max(0, max_retries)

    def __repr__(self) -> str:
        tools = [t.get("function", t).get("name") if isinstance(t, dict) else getattr(t, "name", t)
                 for t in self._tools] if self._tools is not None else "from each request"
        return f"ToolmendMiddleware(tools={tools!r}, max_retries={self._max_retries})"

    def _mender(self, request: Any) -> Tuple[Mender, ToolSet]:
        tools = self._tools if self._tools is not None else request.tools
        return _default_cache.get_for(tools, tool_schemas)

    def _mend(self, request: Any, response: Any, mender: Mender, toolset: ToolSet
              ) -> Tuple[List[Any], List[ToolMessage], bool]:
        """The response's messages with its AIMessage mended, the retry messages for the calls
        that could not be saved, and whether the model must be asked again (no call to run)."""
        messages = list(response.result)
        for i in range(len(messages) - 1, -1, -1):
            if isinstance(messages[i], AIMessage):
                fixed, _ = repair_ai_message(messages[i], mender=mender, toolset=toolset,
                                             recover=self._recover)
                messages[i] = fixed
                retries = [
                    ToolMessage(content=itc["error"], tool_call_id=itc["id"], name=itc.get("name"),
                                status="error", additional_kwargs={RETRY_MARK: True})
                    for itc in fixed.invalid_tool_calls if itc.get("error") and itc.get("id")
                ]
                return messages, retries, bool(retries) and not fixed.tool_calls
        return messages, [], False

    def _mend_history(self, request: Any, mender: Mender) -> Any:
        """The request with the ``invalid_tool_calls`` arguments of its history that a provider
        would reject (chat model integrations send them as the call's arguments) repaired, or
        ``{}``; the agent's state keeps the messages as they were."""
        counts = HistoryCounts()
        messages = None
        for i, message in enumerate(request.messages):
            if not isinstance(message, AIMessage) or not message.invalid_tool_calls:
                continue
            mended = []
            for itc in message.invalid_tool_calls:
                text = history_arguments(mender, itc.get("name") or "", itc.get("args"), counts)
                mended.append(itc if text is None else {**itc, "args": text})
            if any(a is not b for a, b in zip(mended, message.invalid_tool_calls)):
                if messages is None:
                    messages = list(request.messages)
                messages[i] = message.model_copy(update={"invalid_tool_calls": mended})
        if messages is None:
            return request
        logger.info("toolmend langchain: history arguments %s", counts.to_dict())
        return request.override(messages=messages)

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        mender, toolset = self._mender(request)
        request = self._mend_history(request, mender)
        out: List[Any] = []
        response = handler(request)
        for attempt in range(self._max_retries + 1):
            messages, retries, again = self._mend(request, response, mender, toolset)
            if attempt == self._max_retries:
                retries, again = [], False
            out += messages + retries
            if not again:
                return ModelResponse(result=out, structured_response=response.structured_response)
            request = request.override(messages=[*request.messages, *messages, *retries])
            response = handler(request)
        return ModelResponse(result=out, structured_response=response.structured_response)

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        mender, toolset = self._mender(request)
        request = self._mend_history(request, mender)
        out: List[Any] = []
        response = await handler(request)
        for attempt in range(self._max_retries + 1):
            messages, retries, again = self._mend(request, response, mender, toolset)
            if attempt == self._max_retries:
                retries, again = [], False
            out += messages + retries
            if not again:
                return ModelResponse(result=out, structured_response=response.structured_response)
            request = request.override(messages=[*request.messages, *messages, *retries])
            response = await handler(request)
        return ModelResponse(result=out, structured_response=response.structured_response)
