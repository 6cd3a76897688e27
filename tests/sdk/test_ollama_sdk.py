"""The official `ollama` Python package's `chat` against `toolmend serve` (`/api/chat`)."""

from __future__ import annotations

import json

import ollama
import pytest

import mock_upstream as m

TOOLS = [
    {"type": "function", "function": {
        "name": "read", "description": "Read a file",
        "parameters": {"type": "object", "required": ["path"], "additionalProperties": False,
                       "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}}},
]
MESSAGES = [{"role": "user", "content": "Show me the file."}]


def client(base: str) -> ollama.Client:
    return ollama.Client(host=base, timeout=15)


def test_non_streaming_call_is_repaired_and_stays_an_object(proxy, upstream):
    response = client(proxy.url).chat(model="ol-alias-null", messages=MESSAGES, tools=TOOLS)
    (call,) = response.message.tool_calls
    assert call.function.name == "read"
    assert dict(call.function.arguments) == {"path": "/a"}
    assert response.done_reason == "stop"
    sent = upstream.last("ol-alias-null")
    # The package rewrites tools through its own model; the proxy forwards what it sent.
    assert sent.path == "/api/chat"
    assert sent.json()["tools"][0]["function"]["name"] == "read"


def test_valid_call_is_unchanged(proxy):
    response = client(proxy.url).chat(model="ol-valid", messages=MESSAGES, tools=TOOLS)
    (call,) = response.message.tool_calls
    assert dict(call.function.arguments) == json.loads(m.VALID)


def test_hermes_markup_in_content_becomes_a_tool_call(proxy):
    response = client(proxy.url).chat(model="ol-hermes", messages=MESSAGES, tools=TOOLS)
    (call,) = response.message.tool_calls
    assert call.function.name == "read"
    assert dict(call.function.arguments) == {"path": "/etc/hosts"}
    assert "<tool_call>" not in response.message.content
    assert "Let me look." in response.message.content


def stream(base: str, scenario: str):
    text, calls, done_reason = "", [], None
    for chunk in client(base).chat(model=scenario, messages=MESSAGES, tools=TOOLS, stream=True):
        text += chunk.message.content or ""
        calls += chunk.message.tool_calls or []
        if chunk.done:
            done_reason = chunk.done_reason
    return text, calls, done_reason


def test_stream_call_is_repaired(proxy):
    text, calls, done_reason = stream(proxy.url, "ol-stream-alias-null")
    (call,) = calls
    assert dict(call.function.arguments) == {"path": "/a"}
    assert text == "Reading the file."
    assert done_reason == "stop"


def test_stream_valid_call_is_unchanged(proxy):
    _, calls, _ = stream(proxy.url, "ol-stream-valid")
    (call,) = calls
    assert dict(call.function.arguments) == json.loads(m.VALID)


def test_stream_hermes_markup_becomes_a_tool_call(proxy):
    text, calls, done_reason = stream(proxy.url, "ol-stream-hermes")
    (call,) = calls
    assert call.function.name == "read"
    assert dict(call.function.arguments) == {"path": "/etc/hosts"}
    assert "<tool_call>" not in text and "Let me look." in text
    assert done_reason == "stop"


def test_other_ollama_routes_are_forwarded(proxy, upstream):
    listed = client(proxy.url).list()
    assert [model.model for model in listed.models] == ["qwen3:latest"]
    assert any(r.method == "GET" and r.path == "/api/tags" for r in upstream.requests)


def test_unknown_model_error_passes_through(proxy):
    with pytest.raises(ollama.ResponseError) as caught:
        client(proxy.url).chat(model="ol-missing", messages=MESSAGES, tools=TOOLS)
    assert caught.value.status_code == 404
    assert "not found" in str(caught.value)
