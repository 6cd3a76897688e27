"""OpenAI Agents SDK: ``Runner.run`` on a scripted ``Model`` returning a broken function call."""

from __future__ import annotations

import asyncio
from typing import Any, List

import pytest
from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model, ModelProvider
from agents.run import RunConfig
from agents.usage import Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
)

from conftest import ALIASED, PYTHON_DICT, REPAIRED, UNSAVABLE
from toolmend.integrations.openai_agents import ToolmendModel, ToolmendModelProvider

set_tracing_disabled(True)  # no trace export from a test

HERMES = 'Reading.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n</tool_call>'


def message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="msg_1", type="message", role="assistant", status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])])


def function_call(arguments: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(type="function_call", id="fc_1", call_id="call_1",
                                    name="read_file", arguments=arguments, status="completed")


class ScriptedModel(Model):
    """The broken call first; a final answer once the input holds a tool result."""

    def __init__(self, first: Any) -> None:
        self.first = first
        self.calls = 0
        self.inputs: List[Any] = []

    def _output(self, input: Any) -> list:
        self.calls += 1
        self.inputs.append(input)
        answered = not isinstance(input, str) and any(
            isinstance(i, dict) and i.get("type") == "function_call_output" for i in input)
        if answered:
            return [message("done")]
        return [self.first]

    async def get_response(self, system_instructions, input, model_settings, tools,
                           output_schema, handoffs, tracing, **kwargs) -> ModelResponse:
        return ModelResponse(output=self._output(input), usage=Usage(), response_id=None)

    async def stream_response(self, system_instructions, input, model_settings, tools,
                              output_schema, handoffs, tracing, **kwargs):
        output = self._output(input)
        for n, item in enumerate(output):
            yield ResponseOutputItemDoneEvent(type="response.output_item.done", item=item,
                                              output_index=n, sequence_number=n)
        response = Response.model_construct(
            id="resp_1", object="response", created_at=1, status="completed", model="scripted",
            output=output, tools=[], tool_choice="auto", parallel_tool_calls=True, usage=None)
        yield ResponseCompletedEvent(type="response.completed", response=response,
                                     sequence_number=len(output))


RAN: List[dict] = []


@function_tool
def read_file(path: str, limit: int = 100) -> str:
    """Read a text file."""
    RAN.append({"path": path, "limit": limit})
    return f"contents of {path}"


def run(first: Any, with_toolmend: bool, streamed: bool = False):
    RAN.clear()
    inner = ScriptedModel(first)
    model = ToolmendModel(inner) if with_toolmend else inner
    agent = Agent(name="reader", instructions="Read files.", tools=[read_file], model=model)
    if streamed:
        async def main():
            result = Runner.run_streamed(agent, "read notes.txt")
            async for _ in result.stream_events():
                pass
            return result
        result = asyncio.run(main())
    else:
        result = asyncio.run(Runner.run(agent, "read notes.txt"))
    return inner, result


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("broken", [ALIASED, PYTHON_DICT], ids=["aliased", "python-dict"])
def test_tool_runs_with_repaired_arguments(broken, streamed):
    inner, result = run(function_call(broken), with_toolmend=True, streamed=streamed)
    assert RAN == [{**REPAIRED, "limit": 100}]
    assert result.final_output == "done"
    assert inner.calls == 2


@pytest.mark.parametrize("broken", [ALIASED, PYTHON_DICT], ids=["aliased", "python-dict"])
def test_without_toolmend_the_tool_does_not_run(broken):
    inner, result = run(function_call(broken), with_toolmend=False)
    assert RAN == []
    # The SDK answered the model with an error instead: the round trip is spent.
    output = [i for i in inner.inputs[-1] if isinstance(i, dict) and i.get("type") == "function_call_output"]
    assert output and "error" in str(output[0]["output"]).lower()


def test_valid_call_is_the_same_item():
    item = function_call('{"path":  "a.txt"}')
    inner, _ = run(item, with_toolmend=True)
    assert RAN == [{"path": "a.txt", "limit": 100}]
    sent = [i for i in inner.inputs[-1] if isinstance(i, dict) and i.get("type") == "function_call"]
    assert sent[0]["arguments"] == '{"path":  "a.txt"}'


def test_call_written_as_text_becomes_a_function_call():
    run(message(HERMES), with_toolmend=True)
    assert RAN == [{**REPAIRED, "limit": 100}]


def test_unsavable_call_is_left_to_the_sdk():
    inner, _ = run(function_call(UNSAVABLE), with_toolmend=True)
    assert RAN == []


def test_provider_wraps_every_model():
    class Provider(ModelProvider):
        def get_model(self, model_name):
            return ScriptedModel(function_call(ALIASED))

    RAN.clear()
    agent = Agent(name="reader", tools=[read_file])
    config = RunConfig(model_provider=ToolmendModelProvider(Provider()))
    result = asyncio.run(Runner.run(agent, "read notes.txt", run_config=config))
    assert RAN == [{**REPAIRED, "limit": 100}] and result.final_output == "done"


def test_history_arguments_the_provider_would_reject_are_repaired():
    RAN.clear()
    inner = ScriptedModel(message("done"))
    agent = Agent(name="reader", tools=[read_file], model=ToolmendModel(inner))
    history = [
        {"role": "user", "content": "read it"},
        {"type": "function_call", "call_id": "h1", "name": "read_file", "arguments": ""},
        {"type": "function_call_output", "call_id": "h1", "output": "x"},
        {"type": "function_call", "call_id": "h2", "name": "read_file", "arguments": '{"path": "b"}'},
        {"type": "function_call_output", "call_id": "h2", "output": "y"},
        {"role": "user", "content": "again"},
    ]
    asyncio.run(Runner.run(agent, history))
    sent = [i for i in inner.inputs[0] if isinstance(i, dict) and i.get("type") == "function_call"]
    assert [i["arguments"] for i in sent] == ["{}", '{"path": "b"}']
    assert history[1]["arguments"] == ""
