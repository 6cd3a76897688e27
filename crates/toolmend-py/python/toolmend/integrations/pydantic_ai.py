"""pydantic-ai: ``ToolmendModel``, a ``WrapperModel`` that mends tool calls before the agent
validates them.

``Agent(ToolmendModel("openai:gpt-4.1"), tools=[...])`` (or around any ``Model``): each response's
``ToolCallPart`` arguments are checked against the request's tool definitions (function tools
and output tools, their ``parameters_json_schema``) and repaired where they fail, so the agent
runs the tool instead of spending a model round trip on a ``RetryPromptPart``. Calls the model
wrote as text (``<tool_call>`` markup and the like) in a response without tool calls become
``ToolCallPart``s. Streaming (``request_stream``) is mended too: the events pass through as they
arrive and the response the agent validates (``get()``) is the mended one.

A call toolmend cannot save is left as the model sent it; pydantic-ai's own retry then tells the
model what failed. Before each request, tool-call arguments in the history that the provider would
reject (``""``, a cut-off object) are repaired, or sent as ``{}`` when they cannot be; a valid one
keeps its bytes. Repairs are logged on the ``toolmend.integrations.pydantic_ai`` logger and kept
in the response's ``metadata["toolmend"]``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, List, Optional, Tuple

from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel

from .._toolmend import Call, Mender, ToolSet, recover as _recover
from ._core import HistoryCounts, MenderCache, history_arguments, log_calls, new_call_id, openai_tool

__all__ = ["ToolmendModel", "tool_schemas"]

logger = logging.getLogger(__name__)


def tool_schemas(params: ModelRequestParameters) -> List[dict]:
    """The OpenAI-form tool dicts of a request's function and output tools."""
    return [
        openai_tool(t.name, t.parameters_json_schema, t.description or "")
        for t in [*params.function_tools, *params.output_tools]
    ]


def _same_tools(a: tuple, b: tuple) -> bool:
    # Identity, not equality: the agent hands the same ToolDefinition objects to every request
    # of a run, and holding them here keeps their ids from being reused.
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


class ToolmendModel(WrapperModel):
    """Wraps a pydantic-ai model; mends its responses' tool calls before the agent sees them.

    ``recover``: turn calls written as text into ``ToolCallPart``s. ``repair_history``: repair
    history arguments the provider would reject before sending a request.
    """

    def __init__(self, wrapped: Any, *, recover: bool = True, repair_history: bool = True,
                 cache: Optional[MenderCache] = None) -> None:
        super().__init__(wrapped)
        self._recover = recover
        self._repair_history = repair_history
        self._cache = cache if cache is not None else MenderCache(recover="off")
        self._last_key: Optional[Tuple[tuple, Tuple[Mender, ToolSet]]] = None

    def __repr__(self) -> str:
        return f"ToolmendModel({self.wrapped!r}, recover={self._recover})"

    def _tools(self, params: ModelRequestParameters) -> Tuple[Mender, ToolSet]:
        key = (*params.function_tools, *params.output_tools)
        last = self._last_key
        if last is not None and _same_tools(last[0], key):
            return last[1]
        entry = self._cache.get(tool_schemas(params))
        self._last_key = (key, entry)
        return entry

    # ---- the history ---------------------------------------------------------------------

    def _mend_history(self, messages: list, params: ModelRequestParameters) -> list:
        if not self._repair_history:
            return messages
        mender: Optional[Mender] = None
        counts = HistoryCounts()
        out = None
        for i, message in enumerate(messages):
            if not isinstance(message, ModelResponse):
                continue
            parts = None
            for j, part in enumerate(message.parts):
                if not isinstance(part, ToolCallPart) or not isinstance(part.args, (str, type(None))):
                    continue
                if mender is None:
                    mender, _ = self._tools(params)
                text = history_arguments(mender, part.tool_name, part.args, counts)
                if text is not None:
                    if parts is None:
                        parts = list(message.parts)
                    parts[j] = dataclasses.replace(part, args=text)
            if parts is not None:
                if out is None:
                    out = list(messages)
                out[i] = dataclasses.replace(message, parts=parts)
        if counts:
            logger.info("toolmend pydantic_ai: history arguments %s", counts.to_dict())
        return out if out is not None else messages

    # ---- the response --------------------------------------------------------------------

    def _mend_response(self, response: ModelResponse, params: ModelRequestParameters) -> ModelResponse:
        mender, toolset = self._tools(params)
        calls: List[Call] = []
        parts = list(response.parts)
        changed = False
        has_calls = False
        for i, part in enumerate(parts):
            if not isinstance(part, ToolCallPart):
                continue
            has_calls = True
            args = part.args
            text = args if isinstance(args, str) else json.dumps(args or {}, ensure_ascii=False)
            call = mender.repair_call(part.tool_name, text)
            calls.append(call)
            if call.dispatchable and call.status not in ("valid", "unvalidated"):
                new_args = call.arguments if isinstance(args, dict) else call.arguments_text
                parts[i] = dataclasses.replace(part, tool_name=call.name, args=new_args)
                changed = True
        if self._recover and not has_calls:
            for i, part in enumerate(parts):
                if not isinstance(part, TextPart) or not part.content:
                    continue
                found = _recover(part.content, toolset)
                saved = []
                for rc in found.calls:
                    call = mender.repair_call(rc.name, rc.arguments)
                    calls.append(call)
                    if call.dispatchable:
                        saved.append(ToolCallPart(tool_name=call.name, args=call.arguments_text,
                                                  tool_call_id=new_call_id("pyd_ai_")))
                if saved:
                    text_part = [dataclasses.replace(part, content=found.text)] if found.text.strip() else []
                    parts[i:i + 1] = [*text_part, *saved]
                    changed = True
                    break
        if not changed:
            return response
        metadata = dict(response.metadata or {})
        metadata["toolmend"] = {"calls": log_calls(logger, "pydantic_ai", calls)}
        return dataclasses.replace(response, parts=parts, metadata=metadata)

    # ---- the Model interface -------------------------------------------------------------

    async def request(self, messages: list, model_settings: Any,
                      model_request_parameters: ModelRequestParameters) -> ModelResponse:
        messages = self._mend_history(messages, model_request_parameters)
        response = await self.wrapped.request(messages, model_settings, model_request_parameters)
        return self._mend_response(response, model_request_parameters)

    @asynccontextmanager
    async def request_stream(self, messages: list, model_settings: Any,
                             model_request_parameters: ModelRequestParameters,
                             run_context: Any = None) -> AsyncIterator[StreamedResponse]:
        messages = self._mend_history(messages, model_request_parameters)
        async with self.wrapped.request_stream(
            messages, model_settings, model_request_parameters, run_context
        ) as stream:
            built = stream.get

            def mended_get() -> ModelResponse:
                return self._mend_response(built(), model_request_parameters)

            # The events go out as they arrive; the response the agent validates and keeps in
            # its history is the one `get()` builds, so that is where the repair goes.
            stream.get = mended_get  # type: ignore[method-assign]
            yield stream
