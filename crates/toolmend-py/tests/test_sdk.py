"""Round trips with the openai and anthropic SDKs' own response objects."""

from __future__ import annotations

import json

import pytest

import toolmend
from conftest import ANTHROPIC_READ

openai_chat = pytest.importorskip("openai.types.chat")
anthropic_types = pytest.importorskip("anthropic.types")


def completion(arguments: str, content=None, finish="tool_calls"):
    tool_calls = None
    if arguments is not None:
        tool_calls = [{"id": "call_1", "type": "function", "function": {"name": "read", "arguments": arguments}}]
    return openai_chat.ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "qwen3",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": finish,
                    "message": {"role": "assistant", "content": content, "tool_calls": tool_calls},
                }
            ],
        }
    )


def test_chat_completion_arguments_are_repaired_in_place(tools):
    resp = completion("{'file_path': 'a.txt', 'limit': None}")
    [result] = toolmend.repair_chat_completion(resp, tools)
    call = resp.choices[0].message.tool_calls[0]
    assert json.loads(call.function.arguments) == {"path": "a.txt"}
    assert call.id == "call_1"
    assert result.calls[0].status == "repaired"
    # The SDK object still serialises and re-validates.
    again = openai_chat.ChatCompletion.model_validate_json(resp.model_dump_json())
    assert again.choices[0].message.tool_calls[0].function.arguments == call.function.arguments


def test_valid_chat_completion_is_untouched(tools):
    raw = '{"path":   "a.txt"}'
    resp = completion(raw)
    before = resp.model_dump_json()
    [result] = toolmend.repair_chat_completion(resp, tools)
    assert result.calls[0].status == "valid"
    assert resp.model_dump_json() == before


def test_invalid_call_is_left_with_its_error(tools):
    resp = completion('{"limit": 3}')
    [result] = toolmend.repair_chat_completion(resp, tools)
    assert resp.choices[0].message.tool_calls[0].function.arguments == '{"limit": 3}'
    assert result.calls[0].status == "invalid" and "required" in result.calls[0].error


def test_call_written_as_text_becomes_a_tool_call(tools):
    text = 'Reading.\n<tool_call>\n{"name": "read", "arguments": {"path": "a.rs"}}\n</tool_call>'
    resp = completion(None, content=text, finish="stop")
    toolmend.repair_chat_completion(resp, mender=toolmend.Mender(tools, recover="content"))
    message = resp.choices[0].message
    assert message.content.strip() == "Reading."
    assert [tc.function.name for tc in message.tool_calls] == ["read"]
    assert json.loads(message.tool_calls[0].function.arguments) == {"path": "a.rs"}
    assert resp.choices[0].finish_reason == "tool_calls"
    openai_chat.ChatCompletion.model_validate_json(resp.model_dump_json())


def chunk(delta: dict, finish=None):
    return openai_chat.ChatCompletionChunk.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "qwen3",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


def test_chat_stream_is_repaired(tools):
    args = "{'file_path': 'a.txt', 'limit': None}"
    chunks = [chunk({"role": "assistant", "content": "ok"})]
    chunks.append(chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "read", "arguments": ""}}]}))
    for i in range(0, len(args), 5):
        chunks.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[i : i + 5]}}]}))
    chunks.append(chunk({}, finish="tool_calls"))
    results: list = []
    out = list(toolmend.repair_chat_stream(iter(chunks), tools, results=results))
    assert all(isinstance(c, openai_chat.ChatCompletionChunk) for c in out)
    contents = [c.choices[0].delta.content for c in out if c.choices[0].delta.content]
    assert contents == ["ok"]
    carried = [tc for c in out for tc in (c.choices[0].delta.tool_calls or [])]
    assert len(carried) == 1
    assert carried[0].id == "call_1" and carried[0].function.name == "read"
    assert json.loads(carried[0].function.arguments) == {"path": "a.txt"}
    assert out[-1].choices[0].finish_reason == "tool_calls"
    assert results[0].calls[0].status == "repaired"


def test_anthropic_message_is_repaired_in_place():
    msg = anthropic_types.Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude",
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "tu_1", "name": "read", "input": {"file_path": "a.txt", "limit": None}},
                {"type": "tool_use", "id": "tu_2", "name": "read", "input": {"limit": 1}},
            ],
        }
    )
    calls = toolmend.repair_anthropic_message(msg, [ANTHROPIC_READ])
    assert [c.status for c in calls] == ["repaired", "invalid"]
    assert msg.content[1].input == {"path": "a.txt"}
    assert msg.content[2].input == {"limit": 1}
    anthropic_types.Message.model_validate_json(msg.model_dump_json())


def test_helpers_need_tools_or_a_mender():
    with pytest.raises(TypeError):
        toolmend.repair_chat_completion(completion('{"path": "a"}'))
