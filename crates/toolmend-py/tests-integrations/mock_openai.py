"""A scripted OpenAI-compatible upstream for the LiteLLM proxy tests (pure stdlib).

The request's ``model`` names a scenario; ``stream`` picks JSON or SSE (tool-call arguments
split into small fragments). Every request body is recorded for the tests to inspect.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import List, Optional, Tuple

from conftest import ALIASED

#: Valid against `read_file`, spelled so that any re-serialisation would show (spacing,
#: exponent, escapes).
VALID = '{"path": "/src/\\u00e9t\\u00e9.rs",  "limit": 2e1}'
HERMES = 'Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n</tool_call>'

# scenario -> (content, [(call id, name, arguments)])
SCENARIOS = {
    "aliased": (None, [("call_1", "read_file", ALIASED)]),
    "valid": (None, [("call_1", "read_file", VALID)]),
    "hermes": (HERMES, []),
    "echo": ("done", []),
}


def _scenario(model: str) -> Tuple[Optional[str], List[tuple]]:
    for name, scenario in SCENARIOS.items():
        if model.endswith(name):
            return scenario
    return ("unknown scenario " + model, [])


def completion(model: str) -> bytes:
    content, calls = _scenario(model)
    message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                 for i, n, a in calls]
    body = {"id": "chatcmpl-mock", "object": "chat.completion", "created": 1763700000, "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}
    return json.dumps(body).encode()


def _chunk(model: str, delta: dict, finish=None) -> bytes:
    chunk = {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1763700000,
             "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def stream(model: str) -> List[bytes]:
    content, calls = _scenario(model)
    events = [_chunk(model, {"role": "assistant", "content": ""})]
    if content:
        events += [_chunk(model, {"content": content[i:i + 7]}) for i in range(0, len(content), 7)]
    for index, (call_id, name, arguments) in enumerate(calls):
        events.append(_chunk(model, {"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                                     "function": {"name": name, "arguments": ""}}]}))
        for i in range(0, len(arguments), 4):
            events.append(_chunk(model, {"tool_calls": [
                {"index": index, "function": {"arguments": arguments[i:i + 4]}}]}))
    events.append(_chunk(model, {}, finish="tool_calls" if calls else "stop"))
    events.append(b"data: [DONE]\n\n")
    return events


class MockOpenAI:
    """The upstream on 127.0.0.1, a free port, in a thread; ``requests`` holds each body."""

    def __init__(self) -> None:
        self.requests: List[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                body = json.dumps({"object": "list", "data": []}).encode()
                self._send(200, body, "application/json")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                outer.requests.append(request)
                model = request.get("model", "")
                if not request.get("stream"):
                    self._send(200, completion(model), "application/json")
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for event in stream(model):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> "MockOpenAI":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
