"""A scripted OpenAI/Anthropic/Ollama upstream for the SDK tests (pure stdlib).

The request's ``model`` names a scenario; the scenario decides the response, non-streaming or
SSE by the request's ``stream`` flag. SSE bodies go out chunked in small pieces of seeded
random size, each flushed on its own, so events and ``data:`` lines arrive split at odd
points. Every request is recorded (path, headers, body) for the tests to inspect.
"""

from __future__ import annotations

import json
import random
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# What each scenario's upstream sends, as the exact bytes of `arguments` / `partial_json`.
ALIAS_NULL = '{"file_path": "/a", "limit": null}'
ARRAY_STRING = '{"paths": "[\\"a.rs\\", \\"b.rs\\"]", "limit": 2}'
TRAILING_COMMA = '{"path": "/a", "limit": 3,}'
FENCED = '```json\n{"path": "/a"}\n```'
# Valid, with spelling a re-serializer would change (spacing, exponent, escapes).
VALID = '{"path": "/src/\\u00e9t\\u00e9.rs",  "limit": 2e1}'
# Valid against the schema of `read`, containing an escaped quote to split across fragments.
VALID_QUOTED = '{"path": "/tmp/say \\"hi\\".txt"}'
MISSING_REQUIRED = '{"limit": 5}'
HERMES_TEXT = (
    'Let me look.\n<tool_call>\n{"name": "read", "arguments": {"path": "/etc/hosts"}}\n</tool_call>'
)


@dataclass
class Recorded:
    """One request as the upstream saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)


@dataclass
class Reply:
    """One scripted response: a status, a JSON body, or SSE events written in pieces."""

    status: int = 200
    body: bytes = b""
    events: list[bytes] = field(default_factory=list)
    content_type: str = "application/json"


# ---- OpenAI -------------------------------------------------------------------------------


def oa_call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def oa_completion(model: str, content, tool_calls, finish: str,
                  response_id: str = "chatcmpl-mock") -> bytes:
    message = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body = {
        "id": response_id,
        "object": "chat.completion",
        "created": 1763700000,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }
    # Upstream spacing on purpose: a proxy that re-serializes an untouched body shows up.
    return json.dumps(body, indent=1).encode()


def oa_chunk(model: str, delta: dict, finish=None, choices=True, usage=None,
             response_id: str = "chatcmpl-mock") -> bytes:
    chunk = {
        "id": response_id,
        "object": "chat.completion.chunk",
        "created": 1763700000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if choices else [],
    }
    if usage is not None:
        chunk["usage"] = usage
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def oa_stream(model: str, text_pieces, calls, finish: str,
              response_id: str = "chatcmpl-mock") -> list[bytes]:
    """A chat.completion.chunk stream: text deltas, then each call's header and fragments.

    `calls` is a list of (id, name, fragments) in index order.
    """
    events = [oa_chunk(model, {"role": "assistant", "content": ""}, response_id=response_id)]
    events += [oa_chunk(model, {"content": piece}, response_id=response_id) for piece in text_pieces]
    for index, (call_id, name, fragments) in enumerate(calls):
        head = {"index": index, "id": call_id, "type": "function",
                "function": {"name": name, "arguments": ""}}
        events.append(oa_chunk(model, {"tool_calls": [head]}, response_id=response_id))
        for fragment in fragments:
            piece = {"index": index, "function": {"arguments": fragment}}
            events.append(oa_chunk(model, {"tool_calls": [piece]}, response_id=response_id))
    events.append(oa_chunk(model, {}, finish=finish, response_id=response_id))
    usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    events.append(oa_chunk(model, {}, choices=False, usage=usage, response_id=response_id))
    events.append(b": keep-alive comment\n\n")
    events.append(b"data: [DONE]\n\n")
    return events


def split_at(text: str, cuts: list[int]) -> list[str]:
    """`text` cut at the given character offsets (the odd points a server splits at)."""
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


def every(text: str, width: int) -> list[str]:
    return [text[i : i + width] for i in range(0, len(text), width)]


# ---- Anthropic ----------------------------------------------------------------------------


def an_message(model: str, content: list, stop: str, message_id: str = "msg_mock") -> bytes:
    body = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 11, "output_tokens": 7},
    }
    return json.dumps(body, indent=1).encode()


def an_event(name: str, data: dict) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + json.dumps(data).encode() + b"\n\n"


def an_stream(model: str, text_pieces, calls, stop: str,
              message_id: str = "msg_mock") -> list[bytes]:
    """A Messages SSE stream: one text block, then one tool_use block per (id, name, fragments)."""
    start = {"id": message_id, "type": "message", "role": "assistant", "model": model,
             "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {"input_tokens": 11, "output_tokens": 1}}
    events = [an_event("message_start", {"type": "message_start", "message": start})]
    events.append(an_event("content_block_start", {
        "type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}))
    events.append(an_event("ping", {"type": "ping"}))
    for piece in text_pieces:
        events.append(an_event("content_block_delta", {
            "type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": piece}}))
    events.append(an_event("content_block_stop", {"type": "content_block_stop", "index": 0}))
    for offset, (call_id, name, fragments) in enumerate(calls):
        index = offset + 1
        events.append(an_event("content_block_start", {
            "type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}}}))
        for fragment in ["", *fragments]:
            events.append(an_event("content_block_delta", {
                "type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": fragment}}))
        events.append(an_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(an_event("message_delta", {
        "type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": 7}}))
    events.append(an_event("message_stop", {"type": "message_stop"}))
    return events


# ---- OpenAI Responses ---------------------------------------------------------------------


def rs_call(n: int, name: str, arguments: str, status: str = "completed", prefix: str = "") -> dict:
    return {"type": "function_call", "id": f"fc_{prefix}{n}", "call_id": f"call_{prefix}{n}", "name": name,
            "arguments": arguments, "status": status}


def rs_message(text: str, status: str = "completed") -> dict:
    return {"type": "message", "id": "msg_1", "status": status, "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def rs_response(model: str, output: list, status: str = "completed",
                response_id: str = "resp_mock1") -> dict:
    return {"id": response_id, "object": "response", "created_at": 1763700000,
            "status": status, "model": model, "output": output, "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": 11, "output_tokens": 7, "total_tokens": 18,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}


def rs_stream(model: str, text_pieces, calls, response_id: str = "resp_mock1",
              prefix: str = "") -> list[bytes]:
    """A Responses SSE stream: a message item from the text pieces (if any), then one
    function_call item per (name, fragments); numbered events, `response.completed` last."""
    events: list[dict] = [{"type": "response.created", "response": rs_response(model, [], "in_progress", response_id)}]
    output = []
    if text_pieces:
        text = "".join(text_pieces)
        at = len(output)
        events.append({"type": "response.output_item.added", "output_index": at,
                       "item": {**rs_message("", "in_progress"), "content": []}})
        part = {"type": "output_text", "text": "", "annotations": []}
        base = {"item_id": "msg_1", "output_index": at, "content_index": 0}
        events.append({"type": "response.content_part.added", **base, "part": part})
        for piece in text_pieces:
            events.append({"type": "response.output_text.delta", **base, "delta": piece, "logprobs": []})
        events.append({"type": "response.output_text.done", **base, "text": text, "logprobs": []})
        events.append({"type": "response.content_part.done", **base, "part": {**part, "text": text}})
        events.append({"type": "response.output_item.done", "output_index": at, "item": rs_message(text)})
        output.append(rs_message(text))
    for n, (name, fragments) in enumerate(calls, start=1):
        at = len(output)
        arguments = "".join(fragments)
        events.append({"type": "response.output_item.added", "output_index": at,
                       "item": rs_call(n, name, "", "in_progress", prefix)})
        for fragment in fragments:
            events.append({"type": "response.function_call_arguments.delta", "item_id": f"fc_{prefix}{n}",
                           "output_index": at, "delta": fragment})
        events.append({"type": "response.function_call_arguments.done", "item_id": f"fc_{prefix}{n}",
                       "output_index": at, "arguments": arguments})
        events.append({"type": "response.output_item.done", "output_index": at,
                       "item": rs_call(n, name, arguments, prefix=prefix)})
        output.append(rs_call(n, name, arguments, prefix=prefix))
    events.append({"type": "response.completed", "response": rs_response(model, output, response_id=response_id)})
    out = []
    for seq, event in enumerate(events):
        event["sequence_number"] = seq
        out.append(b"event: " + event["type"].encode() + b"\ndata: " + json.dumps(event).encode() + b"\n\n")
    return out


# ---- Ollama -------------------------------------------------------------------------------


def ol_call(name: str, arguments: str) -> dict:
    return {"function": {"name": name, "arguments": json.loads(arguments)}}


def ol_line(model: str, message: dict, done: bool = False) -> dict:
    line = {"model": model, "created_at": "2026-11-21T10:00:00.1Z",
            "message": {"role": "assistant", "content": "", **message}, "done": done}
    if done:
        line.update({"done_reason": "stop", "total_duration": 912000000, "eval_count": 31})
    return line


def ol_stream(model: str, text_pieces, calls) -> list[bytes]:
    """NDJSON lines: text pieces, one line per whole call, then the done line."""
    lines = [ol_line(model, {"content": piece}) for piece in text_pieces]
    lines += [ol_line(model, {"tool_calls": [call]}) for call in calls]
    lines.append(ol_line(model, {}, done=True))
    return [json.dumps(line).encode() + b"\n" for line in lines]


# ---- scenarios ----------------------------------------------------------------------------

READ_TEXT = ["Reading ", "the fi", "le."]


def openai_reply(model: str, stream: bool) -> Reply:
    if model == "oa-error":
        error = {"error": {"message": "model overloaded (mock)", "type": "invalid_request_error",
                           "param": None, "code": "mock_error"}}
        return Reply(status=400, body=json.dumps(error).encode())
    if not stream:
        calls = {
            "oa-alias-null": [oa_call("call_1", "read", ALIAS_NULL)],
            "oa-array-string": [oa_call("call_1", "read_many", ARRAY_STRING)],
            "oa-trailing-comma": [oa_call("call_1", "read", TRAILING_COMMA)],
            "oa-fenced": [oa_call("call_1", "read", FENCED)],
            "oa-valid": [oa_call("call_1", "read", VALID)],
            "oa-invalid": [oa_call("call_1", "read", MISSING_REQUIRED)],
            "oa-parallel": [oa_call("call_1", "read", VALID), oa_call("call_2", "read", ALIAS_NULL)],
        }
        if model in calls:
            return Reply(body=oa_completion(model, None, calls[model], "tool_calls"))
        if model == "oa-hermes":
            return Reply(body=oa_completion(model, HERMES_TEXT, None, "stop"))
    else:
        streams = {
            "oa-stream-alias-null": (READ_TEXT, [
                ("call_1", "read", split_at(ALIAS_NULL, [1, 4, 9, 15, 16, 27, 31]))], "tool_calls"),
            "oa-stream-valid": ([], [("call_1", "read", every(VALID, 3))], "tool_calls"),
            "oa-stream-parallel": ([], [
                ("call_1", "read_many", every(ARRAY_STRING, 5)),
                # Cut between the backslash and the quote it escapes.
                ("call_2", "read", split_at(VALID_QUOTED, [VALID_QUOTED.index('\\"') + 1]))],
                "tool_calls"),
            "oa-stream-hermes": (split_at(HERMES_TEXT, [5, 14, 17, 40, 70]), [], "stop"),
        }
        if model in streams:
            text, calls, finish = streams[model]
            return Reply(events=oa_stream(model, text, calls, finish),
                         content_type="text/event-stream")
    return Reply(status=404, body=json.dumps({"error": {"message": f"no scenario {model}"}}).encode())


def anthropic_reply(model: str, stream: bool) -> Reply:
    text = {"type": "text", "text": "I'll read it."}
    if not stream:
        blocks = {
            "an-alias-null": [text, {"type": "tool_use", "id": "toolu_1", "name": "read",
                                     "input": json.loads(ALIAS_NULL)}],
            "an-array-string": [{"type": "tool_use", "id": "toolu_1", "name": "read_many",
                                 "input": json.loads(ARRAY_STRING)}],
            "an-valid": [text, {"type": "tool_use", "id": "toolu_1", "name": "read",
                                "input": json.loads(VALID)}],
        }
        if model in blocks:
            return Reply(body=an_message(model, blocks[model], "tool_use"))
    else:
        streams = {
            "an-stream-alias-null": [("toolu_1", "read", split_at(ALIAS_NULL, [2, 3, 13, 21, 30]))],
            "an-stream-parallel": [
                ("toolu_1", "read", split_at(TRAILING_COMMA, [7, 8, 24])),
                ("toolu_2", "read", every(VALID, 4)),
            ],
            "an-stream-valid": [("toolu_1", "read", every(VALID, 6))],
        }
        if model in streams:
            return Reply(events=an_stream(model, ["I'll ", "read it."], streams[model], "tool_use"),
                         content_type="text/event-stream")
    error = {"type": "error", "error": {"type": "not_found_error", "message": f"no scenario {model}"}}
    return Reply(status=404, body=json.dumps(error).encode())


def responses_reply(model: str, stream: bool) -> Reply:
    if not stream:
        outputs = {
            "rs-alias-null": [rs_call(1, "read", ALIAS_NULL)],
            "rs-valid": [rs_call(1, "read", VALID)],
            "rs-hermes": [rs_message(HERMES_TEXT)],
        }
        if model in outputs:
            return Reply(body=json.dumps(rs_response(model, outputs[model]), indent=1).encode())
    else:
        streams = {
            "rs-stream-alias-null": (READ_TEXT, [("read", split_at(ALIAS_NULL, [1, 4, 9, 15, 27]))]),
            "rs-stream-valid": ([], [("read", every(VALID, 3))]),
            "rs-stream-hermes": (split_at(HERMES_TEXT, [5, 14, 17, 40, 70]), []),
        }
        if model in streams:
            text, calls = streams[model]
            return Reply(events=rs_stream(model, text, calls), content_type="text/event-stream")
    return Reply(status=404, body=json.dumps({"error": {"message": f"no scenario {model}"}}).encode())


def ollama_reply(model: str, stream: bool) -> Reply:
    if not stream:
        messages = {
            "ol-alias-null": {"tool_calls": [ol_call("read", ALIAS_NULL)]},
            "ol-valid": {"tool_calls": [ol_call("read", VALID)]},
            "ol-hermes": {"content": HERMES_TEXT},
        }
        if model in messages:
            body = ol_line(model, messages[model], done=True)
            return Reply(body=json.dumps(body).encode())
    else:
        streams = {
            "ol-stream-alias-null": (READ_TEXT, [ol_call("read", ALIAS_NULL)]),
            "ol-stream-valid": (READ_TEXT, [ol_call("read", VALID)]),
            "ol-stream-hermes": (split_at(HERMES_TEXT, [5, 14, 17, 40, 70]), []),
        }
        if model in streams:
            text, calls = streams[model]
            return Reply(events=ol_stream(model, text, calls), content_type="application/x-ndjson")
    return Reply(status=404, body=json.dumps({"error": f"model '{model}' not found"}).encode())


# ---- server -------------------------------------------------------------------------------


class MockUpstream:
    """The server in a daemon thread on 127.0.0.1, port chosen by the OS."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.lock = threading.Lock()
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet: pytest shows failures, not access logs
                pass

            def do_GET(self):
                self.record(b"")
                if self.path == "/v1/models":
                    models = {"object": "list", "data": [
                        {"id": "mock-model", "object": "model", "created": 0, "owned_by": "mock"}]}
                    self.send(Reply(body=json.dumps(models).encode()))
                elif self.path == "/api/tags":
                    models = {"models": [{"name": "qwen3:latest", "model": "qwen3:latest",
                                          "modified_at": "2026-11-21T10:00:00Z", "size": 1,
                                          "digest": "abc", "details": {}}]}
                    self.send(Reply(body=json.dumps(models).encode()))
                else:
                    self.send(Reply(status=404, body=b'{"error": {"message": "not found"}}'))

            def do_POST(self):
                body = self.read_body()
                self.record(body)
                request = json.loads(body)
                self.send(upstream.reply(self.path, request))

            def read_body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    parts = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0], 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return b"".join(parts)
                        parts.append(self.rfile.read(size))
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("Content-Length", "0")))

            def record(self, body: bytes) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                with upstream.lock:
                    upstream.requests.append(Recorded(self.command, self.path, headers, body))

            def send(self, reply: Reply) -> None:
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                if not reply.events:
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                    self.wfile.flush()
                    return
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                stream = b"".join(reply.events)
                rng = random.Random(len(stream))  # seeded: a failure reproduces
                at = 0
                while at < len(stream):
                    piece = stream[at : at + rng.randint(1, 90)]
                    at += len(piece)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def reply(self, path: str, request: dict) -> Reply:
        """The scripted response to a POST of `request` (parsed JSON) to `path`; a subclass
        scripts other scenarios (tests/agents does, for whole agent conversations)."""
        model, stream = request.get("model", ""), bool(request.get("stream"))
        if path == "/v1/chat/completions":
            return openai_reply(model, stream)
        if path == "/v1/messages":
            return anthropic_reply(model, stream)
        if path == "/v1/responses":
            return responses_reply(model, stream)
        if path == "/api/chat":
            # Ollama streams unless told not to.
            return ollama_reply(model, request.get("stream", True))
        return Reply(status=404, body=b'{"error": {"message": "not found"}}')

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> "MockUpstream":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def last(self, model: str) -> Recorded:
        """The latest recorded request whose body names `model`."""
        with self.lock:
            for request in reversed(self.requests):
                if request.body and json.loads(request.body).get("model") == model:
                    return request
        raise AssertionError(f"the upstream never received a request for {model}")
