"""OpenAI Agents SDK: a ``Model`` and a ``ModelProvider`` that mend function calls before the
runner parses them.

``Agent(model=ToolmendModel(inner_model))``, or ``RunConfig(model_provider=
ToolmendModelProvider(OpenAIProvider()))`` for every agent of a run. Each response's
``function_call`` items are checked against the request's function tools and handoffs (their
``params_json_schema`` / ``input_json_schema``) and repaired where they fail, so the tool runs
with the repaired arguments instead of the SDK answering the model with an error (the SDK's tool
guardrails can only allow or reject a call, so this is the place). Calls the model wrote as text
in a message become ``function_call`` items. Streaming is mended on the ``output_item.done`` and
``response.completed`` events the runner builds its turn from; text deltas go out unchanged.

A call toolmend cannot save is left as the model sent it, for the SDK's own error path. Before
each request, function-call arguments in the input that the provider would reject (``""``, a cut
off object) are repaired, or sent as ``{}`` when they cannot be; valid ones keep their bytes.
Repairs are logged on the ``toolmend.integrations.openai_agents`` logger.
"""

from __future__ import annotations

import logging
from typing import Any, AsyncIterator, Dict, List, Optional, Sequence, Tuple

from agents.handoffs import Handoff
from agents.items import ModelResponse
from agents.models.interface import Model, ModelProvider
from agents.tool import FunctionTool
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage

from .._toolmend import Call, Mender, ToolSet, recover as _recover
from ._core import HistoryCounts, MenderCache, history_arguments, log_calls, new_call_id, openai_tool

__all__ = ["ToolmendModel", "ToolmendModelProvider", "accepted_schema", "tool_schemas"]

logger = logging.getLogger(__name__)


def accepted_schema(schema: Dict[str, Any]) -> Dict[str, Any]:
    """The arguments a tool accepts, from the schema the model is shown.

    A strict schema (``strict_json_schema=True``, the default) lists every parameter as required,
    also those with a default, because OpenAI's strict mode wants that; the tool's own pydantic
    model fills a missing one with its default. So a parameter with a ``default`` is not required
    here: a call that leaves it out is valid for the SDK, and toolmend must not call it invalid.
    """
    properties = schema.get("properties")
    required = schema.get("required")
    if not isinstance(properties, dict) or not isinstance(required, list):
        return schema
    kept = [name for name in required
            if not (isinstance(properties.get(name), dict) and "default" in properties[name])]
    if len(kept) == len(required):
        return schema
    return {**schema, "required": kept}


def tool_schemas(tools: Sequence[Any], handoffs: Sequence[Any] = ()) -> List[dict]:
    """The OpenAI-form tool dicts of an agent's function tools and handoffs (other hosted
    tools have no arguments schema of ours to check)."""
    out = [openai_tool(t.name, accepted_schema(t.params_json_schema), t.description or "")
           for t in tools if isinstance(t, FunctionTool)]
    out += [openai_tool(h.tool_name, h.input_json_schema, h.tool_description or "")
            for h in handoffs if isinstance(h, Handoff)]
    return out


def _same(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


class _Mending:
    """One response's repairs: the calls seen, by call id, so a streamed item and the
    completed response carry the same arguments."""

    def __init__(self, mender: Mender, toolset: ToolSet, recover: bool) -> None:
        self.mender = mender
        self.toolset = toolset
        self.recover = recover
        self.calls: List[Call] = []
        self.by_id: Dict[str, Any] = {}

    def item(self, item: Any) -> Any:
        """A function_call item, repaired when it fails and can be saved; else the same item."""
        if not isinstance(item, ResponseFunctionToolCall):
            return item
        done = self.by_id.get(item.call_id)
        if done is not None:
            return item if done is True else item.model_copy(update=done)
        call = self.mender.repair_call(item.name, item.arguments)
        self.calls.append(call)
        if call.dispatchable and call.status not in ("valid", "unvalidated"):
            update = {"arguments": call.arguments_text, "name": call.name}
            self.by_id[item.call_id] = update
            return item.model_copy(update=update)
        self.by_id[item.call_id] = True
        return item

    def output(self, output: List[Any]) -> Optional[List[Any]]:
        """The mended output list, or ``None`` when nothing changed."""
        mended = [self.item(i) for i in output]
        changed = any(a is not b for a, b in zip(mended, output))
        if self.recover and not any(isinstance(i, ResponseFunctionToolCall) for i in output):
            rescued = self._recovered(mended)
            if rescued is not None:
                return rescued
        return mended if changed else None

    def _recovered(self, output: List[Any]) -> Optional[List[Any]]:
        for index, item in enumerate(output):
            if not isinstance(item, ResponseOutputMessage):
                continue
            for part in item.content:
                text = getattr(part, "text", None)
                if not text:
                    continue
                found = _recover(text, self.toolset)
                saved = []
                for rc in found.calls:
                    call = self.mender.repair_call(rc.name, rc.arguments)
                    self.calls.append(call)
                    if call.dispatchable:
                        saved.append(ResponseFunctionToolCall(
                            type="function_call", call_id=new_call_id(), name=call.name,
                            arguments=call.arguments_text, id=new_call_id("fc_"),
                            status="completed"))
                if saved:
                    content = [p.model_copy(update={"text": found.text}) if p is part else p
                               for p in item.content]
                    message = [item.model_copy(update={"content": content})] if found.text.strip() else []
                    return [*output[:index], *message, *saved, *output[index + 1:]]
        return None

    def log(self) -> None:
        log_calls(logger, "openai_agents", self.calls)


class ToolmendModel(Model):
    """Wraps an Agents SDK ``Model``; mends each response's function calls.

    ``recover``: turn calls written as text into ``function_call`` items. ``repair_history``:
    repair input arguments the provider would reject before sending a request.
    """

    def __init__(self, wrapped: Model, *, recover: bool = True, repair_history: bool = True,
                 cache: Optional[MenderCache] = None) -> None:
        self.wrapped = wrapped
        self._recover = recover
        self._repair_history = repair_history
        self._cache = cache if cache is not None else MenderCache(recover="off")
        self._last: Optional[Tuple[tuple, Tuple[Mender, ToolSet]]] = None

    def __repr__(self) -> str:
        return f"ToolmendModel({self.wrapped!r}, recover={self._recover})"

    def _tools(self, tools: Sequence[Any], handoffs: Sequence[Any]) -> Tuple[Mender, ToolSet]:
        key = (*tools, *handoffs)
        last = self._last
        if last is not None and _same(last[0], key):
            return last[1]
        entry = self._cache.get(tool_schemas(tools, handoffs))
        self._last = (key, entry)
        return entry

    def _mend_input(self, input: Any, mender: Mender) -> Any:
        if not self._repair_history or isinstance(input, str):
            return input
        counts = HistoryCounts()
        out = None
        for i, item in enumerate(input):
            if not isinstance(item, dict) or item.get("type") != "function_call":
                continue
            text = history_arguments(mender, item.get("name") or "", item.get("arguments"), counts)
            if text is not None:
                if out is None:
                    out = list(input)
                out[i] = {**item, "arguments": text}
        if counts:
            logger.info("toolmend openai_agents: history arguments %s", counts.to_dict())
        return out if out is not None else input

    async def get_response(self, system_instructions: Optional[str], input: Any,
                           model_settings: Any, tools: list, output_schema: Any, handoffs: list,
                           tracing: Any, **kwargs: Any) -> ModelResponse:
        mender, toolset = self._tools(tools, handoffs)
        input = self._mend_input(input, mender)
        response = await self.wrapped.get_response(
            system_instructions, input, model_settings, tools, output_schema, handoffs, tracing,
            **kwargs)
        mending = _Mending(mender, toolset, self._recover)
        output = mending.output(list(response.output))
        mending.log()
        if output is None:
            return response
        response.output = output
        return response

    async def stream_response(self, system_instructions: Optional[str], input: Any,
                              model_settings: Any, tools: list, output_schema: Any,
                              handoffs: list, tracing: Any, **kwargs: Any) -> AsyncIterator[Any]:
        mender, toolset = self._tools(tools, handoffs)
        input = self._mend_input(input, mender)
        mending = _Mending(mender, toolset, self._recover)
        async for event in self.wrapped.stream_response(
            system_instructions, input, model_settings, tools, output_schema, handoffs, tracing,
            **kwargs
        ):
            kind = getattr(event, "type", None)
            if kind == "response.output_item.done":
                item = mending.item(event.item)
                if item is not event.item:
                    event = event.model_copy(update={"item": item})
            elif kind == "response.completed":
                output = mending.output(list(event.response.output))
                if output is not None:
                    event = event.model_copy(
                        update={"response": event.response.model_copy(update={"output": output})})
                mending.log()
            yield event

    async def close(self) -> None:
        await self.wrapped.close()

    def get_retry_advice(self, request: Any) -> Any:
        return self.wrapped.get_retry_advice(request)


class ToolmendModelProvider(ModelProvider):
    """Wraps a ``ModelProvider``: every model it hands out is a ``ToolmendModel`` (one cache of
    menders shared by all of them)."""

    def __init__(self, wrapped: ModelProvider, *, recover: bool = True,
                 repair_history: bool = True) -> None:
        self.wrapped = wrapped
        self._options = {"recover": recover, "repair_history": repair_history}
        self._cache = MenderCache(recover="off")

    def __repr__(self) -> str:
        return f"ToolmendModelProvider({self.wrapped!r})"

    def get_model(self, model_name: Optional[str]) -> Model:
        return ToolmendModel(self.wrapped.get_model(model_name), cache=self._cache, **self._options)

    async def aclose(self) -> None:
        await self.wrapped.aclose()
