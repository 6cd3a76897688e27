"""The official `openai` SDK's Responses API (`client.responses`) against `toolmend serve`."""

from __future__ import annotations

import json

import openai

import mock_upstream as m

# Responses-style tools: flat, no nested `function` object.
TOOLS = [
    {"type": "function", "name": "read", "description": "Read a file", "strict": False,
     "parameters": {"type": "object", "required": ["path"], "additionalProperties": False,
                    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}},
]
INPUT = [{"role": "user", "content": "Show me the file."}]


def client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base + "/v1", api_key="sk-test-0000", max_retries=0, timeout=15)


def create(proxy, scenario: str):
    raw = client(proxy.url).responses.with_raw_response.create(
        model=scenario, input=INPUT, tools=TOOLS)
    return raw, raw.parse()


def calls_of(output) -> list:
    return [item for item in output if item.type == "function_call"]


def test_non_streaming_call_is_repaired(proxy, upstream):
    raw, response = create(proxy, "rs-alias-null")
    (call,) = calls_of(response.output)
    assert (call.call_id, call.name) == ("call_1", "read")
    assert json.loads(call.arguments) == {"path": "/a"}
    assert raw.headers.get("x-toolmend-repairs"), "a repaired response names its repairs"
    sent = upstream.last("rs-alias-null")
    assert sent.path == "/v1/responses"
    assert sent.json()["tools"] == TOOLS


def test_valid_call_passes_through_byte_for_byte(proxy):
    raw, response = create(proxy, "rs-valid")
    (call,) = calls_of(response.output)
    assert call.arguments == m.VALID
    expected = json.dumps(m.rs_response("rs-valid", [m.rs_call(1, "read", m.VALID)]), indent=1)
    assert raw.content == expected.encode()


def test_hermes_markup_in_output_text_becomes_a_function_call(proxy):
    _, response = create(proxy, "rs-hermes")
    (call,) = calls_of(response.output)
    assert call.name == "read" and call.call_id.startswith("call_tm_")
    assert json.loads(call.arguments) == {"path": "/etc/hosts"}
    assert "<tool_call>" not in response.output_text
    assert "Let me look." in response.output_text


def test_observe_mode_never_alters_the_response(proxy_observe):
    raw = client(proxy_observe.url).responses.with_raw_response.create(
        model="rs-alias-null", input=INPUT, tools=TOOLS)
    assert raw.headers.get("x-toolmend-repairs")
    expected = json.dumps(m.rs_response("rs-alias-null", [m.rs_call(1, "read", m.ALIAS_NULL)]),
                          indent=1)
    assert raw.content == expected.encode()


def stream_events(base: str, scenario: str) -> list:
    return list(client(base).responses.create(model=scenario, input=INPUT, tools=TOOLS,
                                              stream=True))


def test_stream_fragments_are_repaired(proxy):
    events = stream_events(proxy.url, "rs-stream-alias-null")
    numbers = [event.sequence_number for event in events]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    deltas = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert json.loads(deltas) == {"path": "/a"}
    (done,) = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert done.arguments == deltas
    (completed,) = [e for e in events if e.type == "response.completed"]
    (call,) = calls_of(completed.response.output)
    assert (call.call_id, call.arguments) == ("call_1", deltas)
    assert completed.response.output_text == "Reading the file."


def test_stream_helper_accumulates_the_repaired_call(proxy):
    """The SDK's own accumulator (`responses.stream`) checks indices and item identities."""
    with client(proxy.url).responses.stream(
            model="rs-stream-alias-null", input=INPUT, tools=TOOLS) as events:
        final = events.get_final_response()
    (call,) = calls_of(final.output)
    assert json.loads(call.arguments) == {"path": "/a"}


def test_stream_valid_call_is_unchanged(proxy):
    events = stream_events(proxy.url, "rs-stream-valid")
    deltas = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert deltas == m.VALID
    assert len(events) == len(m.rs_stream("rs-stream-valid", [], [("read", m.every(m.VALID, 3))]))


def test_stream_hermes_markup_becomes_a_function_call(proxy):
    with client(proxy.url).responses.stream(
            model="rs-stream-hermes", input=INPUT, tools=TOOLS) as events:
        final = events.get_final_response()
    (call,) = calls_of(final.output)
    assert call.name == "read" and call.call_id.startswith("call_tm_")
    assert json.loads(call.arguments) == {"path": "/etc/hosts"}
    assert "<tool_call>" not in final.output_text and "Let me look." in final.output_text
