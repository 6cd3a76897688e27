"""The official `anthropic` SDK against `toolmend serve`: tool_use inputs arrive repaired."""

from __future__ import annotations

import json

import anthropic
import pytest

import mock_upstream as m

TOOLS = [
    {"name": "read", "description": "Read a file",
     "input_schema": {"type": "object", "required": ["path"], "additionalProperties": False,
                      "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}},
    {"name": "read_many", "description": "Read several files",
     "input_schema": {"type": "object", "required": ["paths"], "additionalProperties": False,
                      "properties": {"paths": {"type": "array", "items": {"type": "string"}},
                                     "limit": {"type": "integer"}}}},
]
MESSAGES = [{"role": "user", "content": "Show me the file."}]


def client(base: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=base, api_key="sk-ant-test", max_retries=0, timeout=15)


def tool_uses(message) -> list:
    return [block for block in message.content if block.type == "tool_use"]


@pytest.mark.parametrize("scenario, tool, expected", [
    ("an-alias-null", "read", {"path": "/a"}),
    ("an-array-string", "read_many", {"paths": ["a.rs", "b.rs"], "limit": 2}),
])
def test_messages_create_repairs_input(proxy, upstream, scenario, tool, expected):
    raw = client(proxy.url).messages.with_raw_response.create(
        model=scenario, max_tokens=64, messages=MESSAGES, tools=TOOLS)
    message = raw.parse()
    (block,) = tool_uses(message)
    assert (block.id, block.name, block.input) == ("toolu_1", tool, expected)
    assert message.stop_reason == "tool_use"
    assert raw.headers.get("x-toolmend-repairs"), "a repaired response names its repairs"
    sent = upstream.last(scenario)
    assert sent.path == "/v1/messages"
    assert sent.json()["tools"] == TOOLS
    # The SDK's key header (`x-api-key`, or `authorization: Bearer` in recent SDKs) goes upstream.
    key = sent.headers.get("x-api-key") or sent.headers.get("authorization", "")
    assert key.removeprefix("Bearer ") == "sk-ant-test"
    assert sent.headers.get("anthropic-version"), "the API version header is forwarded"


def test_messages_create_valid_passes_through_byte_for_byte(proxy):
    raw = client(proxy.url).messages.with_raw_response.create(
        model="an-valid", max_tokens=64, messages=MESSAGES, tools=TOOLS)
    assert raw.read() == m.an_message("an-valid", [
        {"type": "text", "text": "I'll read it."},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": json.loads(m.VALID)},
    ], "tool_use")
    (block,) = tool_uses(raw.parse())
    assert block.input == {"path": "/src/été.rs", "limit": 20}


def test_messages_stream_final_message_is_repaired(proxy):
    with client(proxy.url).messages.stream(
            model="an-stream-alias-null", max_tokens=64, messages=MESSAGES, tools=TOOLS) as events:
        final = events.get_final_message()
    assert final.content[0].type == "text" and final.content[0].text == "I'll read it."
    (block,) = tool_uses(final)
    assert (block.id, block.name, block.input) == ("toolu_1", "read", {"path": "/a"})
    assert final.stop_reason == "tool_use"


def raw_stream(base: str, scenario: str) -> dict:
    """`messages.create(stream=True)`: {block index: (type, name, concatenated partial_json)}."""
    blocks = {}
    events = client(base).messages.create(
        model=scenario, max_tokens=64, messages=MESSAGES, tools=TOOLS, stream=True)
    for event in events:
        if event.type == "content_block_start":
            assert event.index not in blocks, "a block started twice"
            name = getattr(event.content_block, "name", None)
            blocks[event.index] = (event.content_block.type, name, "")
        elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
            kind, name, text = blocks[event.index]
            blocks[event.index] = (kind, name, text + event.delta.partial_json)
    return blocks


def test_messages_create_stream_parallel_blocks(proxy):
    blocks = raw_stream(proxy.url, "an-stream-parallel")
    assert [blocks[i][:2] for i in sorted(blocks)] == [("text", None), ("tool_use", "read"),
                                                       ("tool_use", "read")]
    assert json.loads(blocks[1][2]) == {"path": "/a", "limit": 3}
    assert blocks[2][2] == m.VALID, "the valid block's partial_json is unchanged"


def test_messages_stream_valid_is_unchanged(proxy):
    blocks = raw_stream(proxy.url, "an-stream-valid")
    assert blocks[1] == ("tool_use", "read", m.VALID)
    with client(proxy.url).messages.stream(
            model="an-stream-valid", max_tokens=64, messages=MESSAGES, tools=TOOLS) as events:
        final = events.get_final_message()
    (block,) = tool_uses(final)
    assert block.input == {"path": "/src/été.rs", "limit": 20}
