"""LiteLLM: ``ToolmendGuardrail`` for the LiteLLM proxy, ``ToolmendCallback`` for the SDK.

The proxy enables the guardrail from its ``config.yaml``::

    guardrails:
      - guardrail_name: toolmend
        litellm_params:
          guardrail: toolmend.integrations.litellm.ToolmendGuardrail
          mode: [pre_call, post_call]
          default_on: true

Post-call it mends every tool call of a response against the request's ``tools``: non-streaming
in ``async_post_call_success_hook``; streaming in ``async_post_call_streaming_iterator_hook``,
where each call's argument fragments are held until the choice finishes and then sent as one
delta of repaired arguments, and calls the model wrote as text (``<tool_call>`` markup, …) are
taken out of the content as they complete and sent as tool calls, as ``toolmend serve`` does.
Pre-call it repairs the tool-call arguments in the request's history that the provider would
reject (``""``, a cut-off object): repaired when toolmend can save the call, ``{}`` when it
cannot; a valid one keeps its bytes and content is never touched.

A call toolmend cannot save passes through as the model sent it. Every change is logged on
LiteLLM's proxy logger (``LiteLLM Proxy``), recorded as the guardrail's
information in the request's logging metadata, and counted in the ``x-toolmend-repairs``
response header.

``ToolmendCallback`` does the post-call repair for ``litellm.completion`` / ``acompletion`` in
process: ``litellm.callbacks = [ToolmendCallback()]``.
"""

from __future__ import annotations

import time
from typing import Any, AsyncIterator, Dict, List, Optional, Tuple

from litellm._logging import verbose_proxy_logger
from litellm.integrations.custom_guardrail import CustomGuardrail
from litellm.integrations.custom_logger import CustomLogger
from litellm.types.utils import (
    ChatCompletionDeltaToolCall,
    ChatCompletionMessageToolCall,
    Delta,
    Function,
    ModelResponse,
    ModelResponseStream,
)

from .._toolmend import Call, Mender, Session, StreamRecoverer, ToolSet, TurnResult
from ..sdk import _apply_openai
from ._core import HistoryCounts, MenderCache, history_arguments, log_calls, new_call_id

__all__ = [
    "ToolmendCallback",
    "ToolmendGuardrail",
    "mend_history",
    "mend_response",
    "mend_stream",
    "repair_completion",
]

# LiteLLM's own proxy logger ("LiteLLM Proxy"), so repairs show where its operators look.
logger = verbose_proxy_logger

#: The response header that counts the calls toolmend repaired or recovered.
REPAIRS_HEADER = "x-toolmend-repairs"
#: Where the per-request summary is kept in the request's LiteLLM metadata (which LiteLLM keeps
#: for its logging and never sends upstream), for the header hook and the logs.
_STATE_KEY = "toolmend"

_cache = MenderCache(recover="content")


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def request_tools(data: Dict[str, Any]) -> Optional[List[Any]]:
    """The request's ``tools`` (the OpenAI form LiteLLM's proxy takes), or ``None``."""
    tools = data.get("tools")
    if not tools:
        return None
    return [t if isinstance(t, dict) else t.model_dump() for t in tools]


def _mender(data: Dict[str, Any]) -> Optional[Tuple[Mender, ToolSet]]:
    """The request's mender, or ``None`` without tools or with tools toolmend cannot read
    (then the request and its response pass through as they are)."""
    tools = request_tools(data)
    if tools is None:
        return None
    try:
        return _cache.get(tools)
    except (ValueError, TypeError) as e:  # ToolmendError is a ValueError
        logger.warning("toolmend: tools not read, passing through: %s", e)
        return None


def _changed(calls: List[Call]) -> int:
    return sum(1 for c in calls if c.status in ("repaired", "recovered"))


# ---- pre-call: the history ------------------------------------------------------------------


def mend_history(data: Dict[str, Any]) -> HistoryCounts:
    """Repairs, in ``data["messages"]``, the assistant tool-call arguments a provider would
    reject; returns the counts. Content and valid arguments are never touched."""
    counts = HistoryCounts()
    entry = _mender(data)
    messages = data.get("messages")
    if entry is None or not isinstance(messages, list):
        return counts
    mender = entry[0]
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        for tc in message.get("tool_calls") or []:
            function = tc.get("function") if isinstance(tc, dict) else None
            if not isinstance(function, dict):
                continue
            text = history_arguments(mender, function.get("name") or "", function.get("arguments"),
                                     counts)
            if text is not None:
                function["arguments"] = text
    return counts


# ---- post-call: a whole response ------------------------------------------------------------


def _message_dict(message: Any) -> dict:
    calls = []
    for tc in _get(message, "tool_calls") or []:
        function = _get(tc, "function")
        calls.append({"id": _get(tc, "id") or "",
                      "function": {"name": _get(function, "name") or "",
                                   "arguments": _get(function, "arguments")}})
    content = _get(message, "content")
    return {"content": content if isinstance(content, str) else None,
            "reasoning_content": _get(message, "reasoning_content"), "tool_calls": calls}


def mend_response(response: Any, mender: Mender) -> List[Call]:
    """Mends each choice of a LiteLLM ``ModelResponse`` in place; returns every call seen."""
    calls: List[Call] = []
    for choice in _get(response, "choices") or []:
        message = _get(choice, "message")
        if message is None:
            continue
        before = _message_dict(message)
        if not before["tool_calls"] and not before["content"]:
            continue
        result = mender.run_turn(Session(), before, finish_reason=_get(choice, "finish_reason"))
        calls.extend(result.calls)
        if not any(c.status in ("repaired", "recovered") for c in result.calls) \
                and result.content == before["content"]:
            continue
        after = {"content": before["content"], "tool_calls": [dict(tc, function=dict(tc["function"]))
                                                              for tc in before["tool_calls"]]}
        _apply_openai(after, result, False)
        originals = list(_get(message, "tool_calls") or [])
        rebuilt = []
        for i, tc in enumerate(after["tool_calls"] or []):
            original = originals[i] if i < len(originals) else None
            same = (original is not None and tc["id"] == before["tool_calls"][i]["id"]
                    and tc["function"] == before["tool_calls"][i]["function"])
            rebuilt.append(original if same else ChatCompletionMessageToolCall(
                id=tc["id"] or new_call_id(), type="function",
                function=Function(name=tc["function"]["name"],
                                  arguments=tc["function"]["arguments"])))
        message.tool_calls = rebuilt or None
        if after["content"] != before["content"]:
            message.content = after["content"]
        if rebuilt and _get(choice, "finish_reason") == "stop":
            choice.finish_reason = "tool_calls"
    return calls


# ---- post-call: a stream --------------------------------------------------------------------


#: Most tool-call argument bytes held for one streamed choice. Past it the choice's calls go out
#: as they came (what is held in one delta, the rest as it arrives), unrepaired: nothing is lost
#: and the memory a stream takes stays bounded.
MAX_HELD_BYTES = 4 * 1024 * 1024


class _Choice:
    """One streamed choice: its tool calls' fragments, held, and its content's recoverer."""

    __slots__ = ("held", "recoverer", "held_bytes", "passthrough")

    def __init__(self, toolset: Optional[ToolSet]) -> None:
        self.held: Dict[int, Dict[str, str]] = {}
        self.recoverer = StreamRecoverer(toolset) if toolset is not None else None
        self.held_bytes = 0
        self.passthrough = False


def _tool_call_deltas(result: TurnResult, held: List[Dict[str, str]]) -> List[Any]:
    message = {"content": None, "tool_calls": [
        {"id": h["id"], "function": {"name": h["name"], "arguments": h["arguments"]}} for h in held]}
    _apply_openai(message, result, False)
    return [
        ChatCompletionDeltaToolCall(
            index=i, id=tc["id"] or new_call_id(), type="function",
            function=Function(name=tc["function"]["name"], arguments=tc["function"]["arguments"]))
        for i, tc in enumerate(message["tool_calls"] or [])
    ]


async def mend_stream(chunks: AsyncIterator[Any], mender: Mender, toolset: Optional[ToolSet],
                      calls: Optional[List[Call]] = None) -> AsyncIterator[Any]:
    """Mends a stream of LiteLLM ``ModelResponseStream`` chunks (see the module doc).

    Content deltas go out as they arrive, less any markup of a call being written as text;
    tool-call deltas are held and each choice's calls go out, repaired, in one chunk just before
    the chunk that carries its ``finish_reason``. ``calls``, when given, receives every ``Call``.
    """
    choices: Dict[int, _Choice] = {}
    last: Any = None
    for_calls = calls if calls is not None else []
    async for chunk in chunks:
        last = chunk
        before: List[Any] = []
        for choice in _get(chunk, "choices") or []:
            index = _get(choice, "index") or 0
            state = choices.get(index)
            if state is None:
                state = choices[index] = _Choice(toolset)
            delta = _get(choice, "delta")
            if delta is not None:
                if not state.passthrough:
                    for tc in _get(delta, "tool_calls") or []:
                        entry = state.held.setdefault(_get(tc, "index") or 0,
                                                      {"id": "", "name": "", "arguments": ""})
                        function = _get(tc, "function")
                        entry["id"] = _get(tc, "id") or entry["id"]
                        if function is not None:
                            fragment = _get(function, "arguments") or ""
                            entry["name"] += _get(function, "name") or ""
                            entry["arguments"] += fragment
                            state.held_bytes += len(fragment)
                    if _get(delta, "tool_calls"):
                        delta.tool_calls = None
                    if state.held_bytes > MAX_HELD_BYTES:
                        state.passthrough = True
                        before.append(_held_as_sent(chunk, index, state))
                content = _get(delta, "content")
                if state.recoverer is not None and isinstance(content, str) and content:
                    released = state.recoverer.feed(content)
                    delta.content = released.text
                    _hold_recovered(state, released.calls)
            finish = _get(choice, "finish_reason")
            if finish is not None:
                flushed = _flush(chunk, index, state, mender, finish, for_calls)
                if flushed is not None:
                    before.append(flushed)
                    if finish == "stop" and state.held:
                        choice.finish_reason = "tool_calls"
                choices.pop(index, None)
        for extra in before:
            yield extra
        yield chunk
    # A stream cut off before its finish_reason: what is held still goes out (nothing is lost),
    # repaired as a cut-off turn (toolmend never closes a cut-off call of a mutating tool).
    for index, state in list(choices.items()):
        flushed = _flush(last, index, state, mender, "length", for_calls)
        if flushed is not None:
            yield flushed


def _held_as_sent(like: Any, index: int, state: _Choice) -> Any:
    """A chunk with what is held of a choice's calls, as the model sent it; empties the hold."""
    deltas = [ChatCompletionDeltaToolCall(index=i, id=h["id"] or None, type="function",
                                          function=Function(name=h["name"], arguments=h["arguments"]))
              for i, h in sorted(state.held.items())]
    state.held.clear()
    return ModelResponseStream(id=_get(like, "id"), created=_get(like, "created"),
                               model=_get(like, "model"),
                               choices=[{"index": index, "finish_reason": None,
                                         "delta": Delta(tool_calls=deltas)}])


def _hold_recovered(state: _Choice, recovered: List[Any]) -> None:
    for rc in recovered:
        index = max(state.held, default=-1) + 1
        state.held[index] = {"id": new_call_id(), "name": rc.name, "arguments": rc.arguments}


def _flush(like: Any, index: int, state: _Choice, mender: Mender, finish: str,
           calls: List[Call]) -> Optional[Any]:
    """The chunk with a choice's held calls (repaired) and held-back text, or ``None``."""
    text = ""
    if state.recoverer is not None:
        rest = state.recoverer.finish()
        text = rest.text
        _hold_recovered(state, rest.calls)
    if not state.held and not text:
        return None
    deltas = None
    if state.held:
        held = [h for _, h in sorted(state.held.items())]
        message = {"content": None, "tool_calls": [
            {"id": h["id"], "function": {"name": h["name"], "arguments": h["arguments"]}}
            for h in held]}
        result = mender.run_turn(Session(), message, finish_reason=finish)
        calls.extend(result.calls)
        deltas = _tool_call_deltas(result, held)
    return ModelResponseStream(
        id=_get(like, "id"), created=_get(like, "created"), model=_get(like, "model"),
        choices=[{"index": index, "finish_reason": None,
                  "delta": Delta(content=text or None, tool_calls=deltas)}])


# ---- the proxy guardrail --------------------------------------------------------------------


class ToolmendGuardrail(CustomGuardrail):
    """The LiteLLM proxy guardrail (see the module doc for its ``config.yaml`` entry)."""

    def __repr__(self) -> str:
        return f"ToolmendGuardrail(guardrail_name={self.guardrail_name!r})"

    def _record(self, data: Dict[str, Any], event: str, summary: dict, start: float,
                changed: int) -> None:
        metadata = data.get("metadata")
        if not isinstance(metadata, dict):
            metadata = data["metadata"] = {}
        state = metadata.setdefault(_STATE_KEY, {"changed": 0})
        state["changed"] += changed
        state[event] = summary
        try:
            self.add_standard_logging_guardrail_information_to_request_data(
                guardrail_json_response={"toolmend": summary}, request_data=data,
                guardrail_status="success", start_time=start, end_time=time.time(),
                duration=time.time() - start, guardrail_provider="toolmend")
        except Exception:  # logging metadata is best effort; the repair stands either way
            logger.debug("toolmend: could not add guardrail logging information", exc_info=True)

    async def async_pre_call_hook(self, user_api_key_dict: Any, cache: Any, data: dict,
                                  call_type: Any) -> Optional[dict]:
        start = time.time()
        counts = mend_history(data)
        if counts:
            logger.info("toolmend litellm: history arguments %s", counts.to_dict())
            self._record(data, "pre_call", {"history": counts.to_dict()}, start,
                         counts.repaired + counts.emptied)
        return data

    async def async_post_call_success_hook(self, data: dict, user_api_key_dict: Any,
                                           response: Any) -> Any:
        entry = _mender(data)
        if entry is None or not isinstance(response, ModelResponse):
            return response
        start = time.time()
        calls = mend_response(response, entry[0])
        summaries = log_calls(logger, "litellm", calls)
        if summaries:
            self._record(data, "post_call", {"calls": summaries}, start, _changed(calls))
        return response

    async def async_post_call_streaming_iterator_hook(self, user_api_key_dict: Any,
                                                      response: Any, request_data: dict
                                                      ) -> AsyncIterator[Any]:
        entry = _mender(request_data)
        if entry is None:
            async for chunk in response:
                yield chunk
            return
        start = time.time()
        calls: List[Call] = []
        async for chunk in mend_stream(response, entry[0], entry[1], calls):
            yield chunk
        summaries = log_calls(logger, "litellm stream", calls)
        if summaries:
            self._record(request_data, "post_call", {"calls": summaries}, start, _changed(calls))

    async def async_post_call_response_headers_hook(self, data: dict, user_api_key_dict: Any,
                                                    response: Any, request_headers: Any = None,
                                                    litellm_call_info: Any = None
                                                    ) -> Optional[Dict[str, str]]:
        metadata = data.get("metadata")
        state = metadata.get(_STATE_KEY) if isinstance(metadata, dict) else None
        if not state:
            return None
        return {REPAIRS_HEADER: str(state["changed"])}


# ---- the SDK callback -----------------------------------------------------------------------


def repair_completion(response: Any, tools: List[Any]) -> List[Call]:
    """Mends a ``litellm.completion`` response in place against ``tools`` (OpenAI form);
    returns every call seen. For synchronous code, where no callback runs before the return."""
    mender, _ = _cache.get([t if isinstance(t, dict) else t.model_dump() for t in tools])
    calls = mend_response(response, mender)
    log_calls(logger, "litellm", calls)
    return calls


class ToolmendCallback(CustomLogger):
    """Mends ``litellm.acompletion`` responses in process, before they are returned, against the
    call's ``tools``: ``litellm.callbacks = [ToolmendCallback()]``. It runs in LiteLLM's
    post-call deployment hook, which the SDK awaits before returning; synchronous
    ``litellm.completion`` has no such hook, so call ``repair_completion`` on its result."""

    def __repr__(self) -> str:
        return "ToolmendCallback()"

    async def async_post_call_success_deployment_hook(self, request_data: dict, response: Any,
                                                      call_type: Any) -> Any:
        tools = request_data.get("tools")
        if not tools or not isinstance(response, ModelResponse):
            return None
        try:
            repair_completion(response, tools)
        except (ValueError, TypeError) as e:  # tools toolmend cannot read: pass through
            logger.warning("toolmend: tools not read, passing through: %s", e)
        return response
