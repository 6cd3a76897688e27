"""pydantic-ai: an agent on ``FunctionModel`` answering with a broken ``ToolCallPart``."""

from __future__ import annotations

import asyncio
from typing import List

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from conftest import ALIASED, PYTHON_DICT, REPAIRED, UNSAVABLE
from toolmend.integrations.pydantic_ai import ToolmendModel

HERMES = 'Reading.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n</tool_call>'


def retried(messages: List[ModelMessage]) -> bool:
    """Whether the agent sent the model a retry (a validation error for a tool call)."""
    return any(isinstance(p, RetryPromptPart) or getattr(p, "outcome", None) == "retried"
               for m in messages for p in m.parts)


def _last_is_tool_return(messages: List[ModelMessage]) -> bool:
    last = messages[-1]
    return isinstance(last, ModelRequest) and any(
        isinstance(p, (ToolReturnPart, RetryPromptPart)) for p in last.parts)


class Script:
    """The model: the broken call first, a final answer once a tool result or retry came back."""

    def __init__(self, first: str, text: bool = False) -> None:
        self.first = first
        self.text = text
        self.calls = 0
        self.seen: List[List[ModelMessage]] = []

    def respond(self, messages: List[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.calls += 1
        self.seen.append(messages)
        if _last_is_tool_return(messages):
            return ModelResponse(parts=[TextPart("done")])
        if self.text:
            return ModelResponse(parts=[TextPart(self.first)])
        return ModelResponse(parts=[ToolCallPart("read_file", self.first, tool_call_id="call_1")])

    async def stream(self, messages: List[ModelMessage], info: AgentInfo):
        self.calls += 1
        if _last_is_tool_return(messages):
            yield "done"
            return
        text = self.first
        yield {0: DeltaToolCall(name="read_file", tool_call_id="call_1")}
        for i in range(0, len(text), 5):
            yield {0: DeltaToolCall(json_args=text[i:i + 5])}


def make_agent(script: Script, with_toolmend: bool, stream: bool = False):
    model = FunctionModel(stream_function=script.stream) if stream else FunctionModel(script.respond)
    agent = Agent(ToolmendModel(model) if with_toolmend else model, retries=1)
    ran: List[dict] = []

    @agent.tool_plain
    def read_file(path: str, limit: int = 100) -> str:
        """Read a text file."""
        ran.append({"path": path, "limit": limit})
        return f"contents of {path}"

    return agent, ran


@pytest.mark.parametrize("broken", [ALIASED, PYTHON_DICT], ids=["aliased", "python-dict"])
def test_tool_runs_with_repaired_arguments_and_no_retry_is_spent(broken):
    script = Script(broken)
    agent, ran = make_agent(script, with_toolmend=True)
    result = agent.run_sync("read notes.txt")
    assert ran == [{**REPAIRED, "limit": 100}]
    assert result.output == "done"
    assert script.calls == 2  # the call, then the answer: no retry prompt
    assert not retried(result.all_messages())
    [response] = [m for m in result.all_messages() if isinstance(m, ModelResponse)
                  and any(isinstance(p, ToolCallPart) for p in m.parts)]
    assert response.metadata["toolmend"]["calls"][0]["status"] == "repaired"


@pytest.mark.parametrize("broken", [ALIASED, PYTHON_DICT], ids=["aliased", "python-dict"])
def test_without_toolmend_a_retry_is_spent(broken):
    script = Script(broken)
    agent, ran = make_agent(script, with_toolmend=False)
    result = agent.run_sync("read notes.txt")
    assert ran == []
    assert script.calls == 2
    assert retried(result.all_messages())


def test_streamed_tool_call_is_repaired():
    script = Script(ALIASED)
    agent, ran = make_agent(script, with_toolmend=True, stream=True)

    async def main():
        async with agent.run_stream("read notes.txt") as run:
            return await run.get_output()

    assert asyncio.run(main()) == "done"
    assert ran == [{**REPAIRED, "limit": 100}]
    assert script.calls == 2


def test_streamed_without_toolmend_spends_a_retry():
    script = Script(ALIASED)
    agent, ran = make_agent(script, with_toolmend=False, stream=True)

    async def main():
        async with agent.run_stream("read notes.txt") as run:
            return await run.get_output()

    asyncio.run(main())
    assert ran == []


def test_call_written_as_text_becomes_a_tool_call():
    script = Script(HERMES, text=True)
    agent, ran = make_agent(script, with_toolmend=True)
    assert agent.run_sync("read notes.txt").output == "done"
    assert ran == [{**REPAIRED, "limit": 100}]


def test_unsavable_call_is_left_to_the_agents_retry():
    script = Script(UNSAVABLE)
    agent, ran = make_agent(script, with_toolmend=True)
    result = agent.run_sync("read notes.txt")
    assert ran == []
    assert retried(result.all_messages())


def test_history_arguments_the_provider_would_reject_are_repaired():
    script = Script(ALIASED)
    agent, ran = make_agent(script, with_toolmend=True)
    valid = '{"path":  "a.txt"}'
    history = [
        ModelRequest.user_text_prompt("read both"),
        ModelResponse(parts=[ToolCallPart("read_file", "", tool_call_id="h1"),
                             ToolCallPart("read_file", valid, tool_call_id="h2"),
                             ToolCallPart("read_file", PYTHON_DICT, tool_call_id="h3"),
                             ToolCallPart("read_file", '{"path": "c.txt"', tool_call_id="h4")]),
        ModelRequest(parts=[ToolReturnPart("read_file", "x", tool_call_id=i) for i in ("h1", "h2", "h3", "h4")]),
        ModelResponse(parts=[TextPart("ok")]),
    ]
    agent.run_sync("read notes.txt", message_history=history)
    sent = [p for m in script.seen[0] if isinstance(m, ModelResponse) for p in m.parts
            if isinstance(p, ToolCallPart)]
    # "" and a cut-off object (toolmend never closes one) cannot be saved: `{}`; the Python
    # dict text is repaired; the valid one keeps its bytes.
    assert [p.args for p in sent] == ["{}", valid, '{"path":"notes.txt"}', "{}"]
    # The caller's history objects are not changed.
    assert history[1].parts[0].args == ""
