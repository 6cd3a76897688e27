"""The official `openai` SDK against `toolmend serve`: tool calls arrive parsed and repaired."""

from __future__ import annotations

import json
import urllib.request

import openai
import pytest

import mock_upstream as m

TOOLS = [
    {"type": "function", "function": {
        "name": "read", "description": "Read a file",
        "parameters": {"type": "object", "required": ["path"], "additionalProperties": False,
                       "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}}},
    {"type": "function", "function": {
        "name": "read_many", "description": "Read several files",
        "parameters": {"type": "object", "required": ["paths"], "additionalProperties": False,
                       "properties": {"paths": {"type": "array", "items": {"type": "string"}},
                                      "limit": {"type": "integer"}}}}},
]
MESSAGES = [{"role": "user", "content": "Show me the file."}]


def client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base + "/v1", api_key="sk-test-0000", max_retries=0, timeout=15)


def create(proxy, scenario: str, **extra):
    """A non-streaming call through the proxy; returns (raw response, parsed completion)."""
    raw = client(proxy.url).chat.completions.with_raw_response.create(
        model=scenario, messages=MESSAGES, tools=TOOLS, **extra)
    return raw, raw.parse()


def stream(base: str, scenario: str):
    """A streaming call; returns (content text, {index: (id, name, arguments)}, finish, usage)."""
    text, calls, finish, usage = "", {}, None, None
    chunks = client(base).chat.completions.create(
        model=scenario, messages=MESSAGES, tools=TOOLS, stream=True,
        stream_options={"include_usage": True})
    for chunk in chunks:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
            for call in choice.delta.tool_calls or []:
                call_id, name, arguments = calls.get(call.index, (None, None, ""))
                if call.id:
                    assert call_id in (None, call.id), "a call's id changed mid-stream"
                    call_id = call.id
                if call.function and call.function.name:
                    name = call.function.name
                if call.function and call.function.arguments:
                    arguments += call.function.arguments
                calls[call.index] = (call_id, name, arguments)
    return text, calls, finish, usage


# ---- non-streaming ------------------------------------------------------------------------

@pytest.mark.parametrize("scenario, tool, expected", [
    ("oa-alias-null", "read", {"path": "/a"}),
    ("oa-array-string", "read_many", {"paths": ["a.rs", "b.rs"], "limit": 2}),
    ("oa-trailing-comma", "read", {"path": "/a", "limit": 3}),
    ("oa-fenced", "read", {"path": "/a"}),
])
def test_non_streaming_call_is_repaired(proxy, upstream, scenario, tool, expected):
    raw, completion = create(proxy, scenario)
    (call,) = completion.choices[0].message.tool_calls
    assert (call.id, call.function.name) == ("call_1", tool)
    assert json.loads(call.function.arguments) == expected
    assert completion.choices[0].finish_reason == "tool_calls"
    assert raw.headers.get("x-toolmend-repairs"), "a repaired response names its repairs"
    # The request went to the upstream root + the path the SDK used, tools and key intact.
    sent = upstream.last(scenario)
    assert sent.path == "/v1/chat/completions"
    assert sent.json()["tools"] == TOOLS
    assert sent.headers.get("authorization") == "Bearer sk-test-0000"


def test_valid_call_passes_through_byte_for_byte(proxy, upstream):
    raw, completion = create(proxy, "oa-valid")
    (call,) = completion.choices[0].message.tool_calls
    assert call.function.arguments == m.VALID
    assert raw.content == m.oa_completion("oa-valid", None, [m.oa_call("call_1", "read", m.VALID)],
                                          "tool_calls")


def test_parallel_calls_repair_only_the_broken_one(proxy):
    _, completion = create(proxy, "oa-parallel")
    first, second = completion.choices[0].message.tool_calls
    assert (first.id, first.function.arguments) == ("call_1", m.VALID)
    assert (second.id, json.loads(second.function.arguments)) == ("call_2", {"path": "/a"})


def test_unrepairable_call_keeps_the_upstream_text(proxy):
    _, completion = create(proxy, "oa-invalid")
    (call,) = completion.choices[0].message.tool_calls
    assert call.function.arguments == m.MISSING_REQUIRED


def test_invalid_reject_turns_the_call_into_a_retry_message(proxy_reject):
    raw, completion = create(proxy_reject, "oa-invalid")
    message = completion.choices[0].message
    assert not message.tool_calls, "a rejected call is not dispatched"
    assert "Tool call `read` was rejected" in message.content
    assert "path" in message.content
    assert completion.choices[0].finish_reason != "tool_calls"
    assert raw.headers.get("x-toolmend-repairs")


def test_hermes_markup_in_content_becomes_a_tool_call(proxy):
    _, completion = create(proxy, "oa-hermes")
    message = completion.choices[0].message
    (call,) = message.tool_calls
    assert call.type == "function" and call.id, "a recovered call gets an id"
    assert call.function.name == "read"
    assert json.loads(call.function.arguments) == {"path": "/etc/hosts"}
    assert "<tool_call>" not in (message.content or "")
    assert "Let me look." in (message.content or "")
    assert completion.choices[0].finish_reason == "tool_calls"


def test_recover_off_leaves_markup_in_content(proxy_recover_off):
    raw, completion = create(proxy_recover_off, "oa-hermes")
    assert completion.choices[0].message.tool_calls is None
    assert completion.choices[0].message.content == m.HERMES_TEXT
    assert raw.content == m.oa_completion("oa-hermes", m.HERMES_TEXT, None, "stop")


def test_observe_mode_never_alters_the_response(proxy_observe):
    raw, _ = create(proxy_observe, "oa-alias-null")
    assert raw.content == m.oa_completion(
        "oa-alias-null", None, [m.oa_call("call_1", "read", m.ALIAS_NULL)], "tool_calls")


def test_upstream_error_passes_through_with_its_status(proxy):
    with pytest.raises(openai.BadRequestError) as caught:
        create(proxy, "oa-error")
    assert caught.value.status_code == 400
    assert "model overloaded (mock)" in str(caught.value)


def test_other_paths_are_forwarded(proxy, upstream):
    models = client(proxy.url).models.list()
    assert [model.id for model in models] == ["mock-model"]
    assert any(r.method == "GET" and r.path == "/v1/models" for r in upstream.requests)


def test_metrics_count_the_repairs(proxy):
    create(proxy, "oa-alias-null")
    with urllib.request.urlopen(proxy.url + "/metrics", timeout=5) as response:
        text = response.read().decode()
    for kind in ("field_renamed", "null_stripped"):
        assert f'toolmend_repairs_total{{model="oa-alias-null",tool="read",kind="{kind}"}}' in text


def test_healthz(proxy):
    with urllib.request.urlopen(proxy.url + "/healthz", timeout=5) as response:
        assert response.status == 200


# ---- streaming ----------------------------------------------------------------------------

def test_stream_fragments_are_repaired_into_one_call(proxy):
    text, calls, finish, usage = stream(proxy.url, "oa-stream-alias-null")
    assert calls == {0: ("call_1", "read", calls[0][2])}
    assert json.loads(calls[0][2]) == {"path": "/a"}
    assert text == "Reading the file."
    assert finish == "tool_calls"
    assert usage is not None and usage.total_tokens == 18


def test_stream_valid_call_is_unchanged(proxy):
    _, calls, finish, _ = stream(proxy.url, "oa-stream-valid")
    assert calls == {0: ("call_1", "read", m.VALID)}
    assert finish == "tool_calls"


def test_stream_parallel_calls(proxy):
    _, calls, _, _ = stream(proxy.url, "oa-stream-parallel")
    assert set(calls) == {0, 1}
    assert calls[0][:2] == ("call_1", "read_many")
    assert json.loads(calls[0][2]) == {"paths": ["a.rs", "b.rs"], "limit": 2}
    assert calls[1] == ("call_2", "read", m.VALID_QUOTED)


def test_stream_hermes_markup_becomes_a_tool_call(proxy):
    text, calls, finish, _ = stream(proxy.url, "oa-stream-hermes")
    (call_id, name, arguments), = calls.values()
    assert call_id and name == "read"
    assert json.loads(arguments) == {"path": "/etc/hosts"}
    assert "<tool_call>" not in text and "Let me look." in text
    assert finish == "tool_calls"


def test_stream_helper_final_completion(proxy):
    """The SDK's own accumulator (`chat.completions.stream`) sees the repaired call."""
    with client(proxy.url).chat.completions.stream(
            model="oa-stream-alias-null", messages=MESSAGES, tools=TOOLS) as events:
        final = events.get_final_completion()
    (call,) = final.choices[0].message.tool_calls
    assert call.function.name == "read"
    assert json.loads(call.function.arguments) == {"path": "/a"}
