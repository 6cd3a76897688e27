"""LangChain v1: ``create_agent`` on a scripted chat model, with and without the middleware."""

from __future__ import annotations

import asyncio
import json
from typing import Any, List

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from conftest import ALIASED, PYTHON_DICT, REPAIRED, UNSAVABLE

from toolmend.integrations.langchain import ToolmendMiddleware, repair_ai_message

RAN: List[dict] = []


@tool
def read_file(path: str, limit: int = 100) -> str:
    """Read a text file."""
    RAN.append({"path": path, "limit": limit})
    return f"contents of {path}"


class ScriptedModel(GenericFakeChatModel):
    """Answers from a script, counting the calls; tools are bound by the agent and ignored."""

    calls: int = 0

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedModel":
        return self

    def _generate(self, *args: Any, **kwargs: Any):
        self.calls += 1
        return super()._generate(*args, **kwargs)


def broken_message(kind: str) -> AIMessage:
    if kind == "schema":  # parsed by the provider adapter, but the args fail the tool's schema
        return AIMessage(content="", tool_calls=[
            {"name": "read_file", "args": json.loads(ALIASED), "id": "call_1", "type": "tool_call"}])
    # the provider adapter could not parse the arguments at all
    return AIMessage(content="", invalid_tool_calls=[
        {"name": "read_file", "args": PYTHON_DICT, "id": "call_1", "error": "bad JSON",
         "type": "invalid_tool_call"}])


def run(first: AIMessage, with_toolmend: bool, *, tools_given: bool = False, use_async: bool = False):
    RAN.clear()
    model = ScriptedModel(messages=iter([first, AIMessage(content="done")]))
    middleware = [ToolmendMiddleware([read_file] if tools_given else None)] if with_toolmend else []
    agent = create_agent(model=model, tools=[read_file], middleware=middleware)
    request = {"messages": [{"role": "user", "content": "read notes.txt"}]}
    result = asyncio.run(agent.ainvoke(request)) if use_async else agent.invoke(request)
    return model, result["messages"]


@pytest.mark.parametrize("mode", ["sync", "async", "tools-given"])
@pytest.mark.parametrize("kind", ["schema", "unparsed"])
def test_agent_runs_the_tool_once_with_repaired_arguments(kind, mode):
    model, messages = run(broken_message(kind), with_toolmend=True,
                          tools_given=mode == "tools-given", use_async=mode == "async")
    assert RAN == [{**REPAIRED, "limit": 100}]
    assert model.calls == 2
    assert messages[-1].content == "done"
    [tool_message] = [m for m in messages if isinstance(m, ToolMessage)]
    assert tool_message.status == "success" and tool_message.content == "contents of notes.txt"
    repaired = [m for m in messages if isinstance(m, AIMessage) and m.tool_calls][0]
    assert repaired.response_metadata["toolmend"]["calls"][0]["status"] == "repaired"


@pytest.mark.parametrize("kind", ["schema", "unparsed"])
def test_without_toolmend_the_tool_never_runs(kind):
    model, messages = run(broken_message(kind), with_toolmend=False)
    assert RAN == []
    if kind == "unparsed":
        # create_agent ignores invalid_tool_calls: the run ends on the broken message.
        assert model.calls == 1 and messages[-1].invalid_tool_calls
    else:
        # The tool node's validation error goes back to the model: a round trip spent.
        [tool_message] = [m for m in messages if isinstance(m, ToolMessage)]
        assert tool_message.status == "error"


def test_a_valid_call_is_the_same_message():
    message = AIMessage(content="", tool_calls=[
        {"name": "read_file", "args": {"path": "a.txt"}, "id": "call_1", "type": "tool_call"}])
    fixed, [call] = repair_ai_message(message, [read_file])
    assert fixed is message and call.status == "valid"


def test_an_unsavable_call_sends_the_retry_message_to_the_model():
    first = AIMessage(content="", tool_calls=[
        {"name": "read_file", "args": json.loads(UNSAVABLE), "id": "call_1", "type": "tool_call"}])
    model, messages = run(first, with_toolmend=True)
    assert RAN == []
    assert model.calls == 2 and messages[-1].content == "done"
    [retry] = [m for m in messages if isinstance(m, ToolMessage)]
    assert retry.status == "error" and "path" in retry.content


def test_a_call_written_as_text_becomes_a_tool_call():
    text = 'Reading.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n</tool_call>'
    fixed, _ = repair_ai_message(AIMessage(content=text), [read_file])
    assert [tc["args"] for tc in fixed.tool_calls] == [REPAIRED]
    assert fixed.content.strip() == "Reading."


def test_a_call_to_a_tool_it_was_not_given_is_left_alone():
    # A structured-output tool the agent binds itself is not among the agent's tools.
    message = AIMessage(content="", tool_calls=[
        {"name": "Answer", "args": {"text": "hi"}, "id": "call_1", "type": "tool_call"}])
    fixed, _ = repair_ai_message(message, [read_file])
    assert fixed is message


def test_history_arguments_a_provider_would_reject_are_repaired_in_the_request():
    seen = []

    class Recording(ScriptedModel):
        def _generate(self, messages, *args: Any, **kwargs: Any):
            seen.append(messages)
            return super()._generate(messages, *args, **kwargs)

    model = Recording(messages=iter([AIMessage(content="done")]))
    agent = create_agent(model=model, tools=[read_file], middleware=[ToolmendMiddleware()])
    broken = AIMessage(content="", invalid_tool_calls=[
        {"name": "read_file", "args": "", "id": "h1", "error": None, "type": "invalid_tool_call"},
        {"name": "read_file", "args": PYTHON_DICT, "id": "h2", "error": None,
         "type": "invalid_tool_call"}])
    history = [{"role": "user", "content": "read"}, broken,
               ToolMessage(content="x", tool_call_id="h1"), ToolMessage(content="y", tool_call_id="h2"),
               {"role": "user", "content": "again"}]
    result = agent.invoke({"messages": history})
    [sent] = [m for m in seen[0] if isinstance(m, AIMessage)]
    assert [itc["args"] for itc in sent.invalid_tool_calls] == ["{}", '{"path":"notes.txt"}']
    # The agent's state keeps the message as it was.
    [kept] = [m for m in result["messages"] if isinstance(m, AIMessage) and m.invalid_tool_calls]
    assert [itc["args"] for itc in kept.invalid_tool_calls] == ["", PYTHON_DICT]
