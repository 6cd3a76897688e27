"""The official SDK clients send conversation histories with broken tool calls through
`toolmend serve` (issue #29 §1): the upstream receives those calls mended (`arguments: ""` as
`{}` when it cannot be saved, a Python literal as JSON, an Anthropic `tool_use.input` sent as a
JSON string as the object), the rest of the history untouched, and a clean history as the very
bytes the SDK sent.

The `ollama` SDK validates `arguments` as a mapping before sending, so it cannot send string
arguments at all; its clean history is checked here, and string arguments by a raw client in
crates/toolmend-proxy/tests/history.rs.
"""

from __future__ import annotations

import json

import anthropic
import httpx
import httpx2
import ollama
import openai

OA_TOOLS = [
    {"type": "function", "function": {
        "name": "read", "description": "Read a file",
        "parameters": {"type": "object", "required": ["path"], "additionalProperties": False,
                       "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}}},
]
AN_TOOLS = [{"name": "read", "description": "Read a file", "input_schema": {
    "type": "object", "required": ["path"], "additionalProperties": False,
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}}]
RS_TOOLS = [{"type": "function", "name": "read", "description": "Read a file", "strict": False,
             "parameters": OA_TOOLS[0]["function"]["parameters"]}]

EMPTY = ""
PYTHON = "{'path': '/a', 'limit': 5,}"
STRINGIFIED = json.dumps(json.dumps({"path": "/b"}))
CLEAN = '{ "path":"/c",  "limit": 2 }'


class Sent:
    """The bodies an SDK's HTTP client sent, captured by a request hook."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    def hook(self, request) -> None:
        self.bodies.append(request.read())


def oa_client(base: str, sent: Sent) -> openai.OpenAI:
    http = httpx2.Client(event_hooks={"request": [sent.hook]})
    return openai.OpenAI(base_url=base + "/v1", api_key="sk-test-0000", max_retries=0,
                         timeout=15, http_client=http)


def an_client(base: str, sent: Sent) -> anthropic.Anthropic:
    http = httpx2.Client(event_hooks={"request": [sent.hook]})
    return anthropic.Anthropic(base_url=base, api_key="sk-ant-test", max_retries=0, timeout=15,
                               http_client=http)


def chat_messages(arguments: list[str]) -> list[dict]:
    calls = [{"id": f"call_{i}", "type": "function",
              "function": {"name": "read", "arguments": a}} for i, a in enumerate(arguments)]
    results = [{"role": "tool", "tool_call_id": c["id"], "content": "{not json"} for c in calls]
    return [{"role": "user", "content": "Show me {the} files."},
            {"role": "assistant", "content": None, "tool_calls": calls},
            *results,
            {"role": "user", "content": "Go on."}]


def test_openai_chat_history_reaches_the_upstream_mended(proxy, upstream):
    messages = chat_messages([EMPTY, PYTHON, STRINGIFIED, CLEAN])
    oa_client(proxy.url, Sent()).chat.completions.create(
        model="oa-valid", messages=messages, tools=OA_TOOLS)
    got = upstream.last("oa-valid").json()["messages"]
    arguments = [c["function"]["arguments"] for c in got[1]["tool_calls"]]
    # `read` needs `path`: the empty call cannot be saved and goes as `{}`.
    assert arguments == ["{}", '{"path":"/a","limit":5}', '{"path":"/b"}', CLEAN]
    for i in (0, 2, 3, 4, 5, 6):
        assert got[i] == messages[i], f"message {i} was touched"


def test_openai_chat_clean_history_is_the_same_bytes(proxy, upstream):
    sent = Sent()
    oa_client(proxy.url, sent).chat.completions.create(
        model="oa-valid", messages=chat_messages([CLEAN, '{"path": "/d"}']), tools=OA_TOOLS)
    assert upstream.last("oa-valid").body == sent.bodies[-1]


def test_openai_responses_history_reaches_the_upstream_mended(proxy, upstream):
    def item(call_id: str, arguments: str) -> dict:
        return {"type": "function_call", "call_id": call_id, "name": "read",
                "arguments": arguments}
    items = [{"role": "user", "content": "Show me the files."},
             item("c1", EMPTY), item("c2", PYTHON), item("c3", STRINGIFIED), item("c4", CLEAN),
             {"type": "function_call_output", "call_id": "c1", "output": "{x"}]
    oa_client(proxy.url, Sent()).responses.create(model="rs-valid", input=items, tools=RS_TOOLS)
    got = upstream.last("rs-valid").json()["input"]
    assert [i["arguments"] for i in got[1:5]] == [
        "{}", '{"path":"/a","limit":5}', '{"path":"/b"}', CLEAN]
    assert got[0] == items[0] and got[5] == items[5]


def test_openai_responses_clean_history_is_the_same_bytes(proxy, upstream):
    sent = Sent()
    items = [{"role": "user", "content": "Show me the files."},
             {"type": "function_call", "call_id": "c1", "name": "read", "arguments": CLEAN},
             {"type": "function_call_output", "call_id": "c1", "output": "x"}]
    oa_client(proxy.url, sent).responses.create(model="rs-valid", input=items, tools=RS_TOOLS)
    assert upstream.last("rs-valid").body == sent.bodies[-1]


def an_messages(inputs: list) -> list[dict]:
    uses = [{"type": "tool_use", "id": f"toolu_{i}", "name": "read", "input": x}
            for i, x in enumerate(inputs)]
    results = [{"type": "tool_result", "tool_use_id": u["id"], "content": "x"} for u in uses]
    return [{"role": "user", "content": "Show me the files."},
            {"role": "assistant", "content": [{"type": "text", "text": "Reading {x"}, *uses]},
            {"role": "user", "content": results}]


def test_anthropic_history_reaches_the_upstream_mended(proxy, upstream):
    # `input` must be an object: a JSON string of the object, a Python literal, an empty string.
    messages = an_messages([json.dumps({"path": "/b"}), PYTHON, EMPTY, {"path": "/c"}])
    an_client(proxy.url, Sent()).messages.create(
        model="an-valid", max_tokens=64, messages=messages, tools=AN_TOOLS)
    got = upstream.last("an-valid").json()["messages"]
    blocks = got[1]["content"]
    assert blocks[0] == messages[1]["content"][0]
    assert [b["input"] for b in blocks[1:]] == [
        {"path": "/b"}, {"path": "/a", "limit": 5}, {}, {"path": "/c"}]
    assert got[0] == messages[0] and got[2] == messages[2]


def test_anthropic_clean_history_is_the_same_bytes(proxy, upstream):
    sent = Sent()
    an_client(proxy.url, sent).messages.create(
        model="an-valid", max_tokens=64, messages=an_messages([{"path": "/c", "limit": 2}]),
        tools=AN_TOOLS)
    assert upstream.last("an-valid").body == sent.bodies[-1]


def test_ollama_clean_history_is_the_same_bytes(proxy, upstream):
    sent = Sent()
    client = ollama.Client(host=proxy.url, event_hooks={"request": [sent.hook]})
    messages = [{"role": "user", "content": "Show me the files."},
                {"role": "assistant", "content": "",
                 "tool_calls": [{"function": {"name": "read", "arguments": {"path": "/c"}}}]},
                {"role": "tool", "content": "x"}]
    client.chat(model="ol-valid", messages=messages, tools=OA_TOOLS, stream=False)
    assert upstream.last("ol-valid").body == sent.bodies[-1]


def test_the_ollama_sdk_refuses_string_arguments_itself(proxy):
    messages = [{"role": "assistant", "content": "",
                 "tool_calls": [{"function": {"name": "read", "arguments": PYTHON}}]}]
    try:
        ollama.Client(host=proxy.url).chat(model="ol-valid", messages=messages, stream=False)
    except Exception as error:  # pydantic's ValidationError, raised before any request
        assert "arguments" in str(error)
    else:
        raise AssertionError("the ollama SDK sent string arguments: test them here")
