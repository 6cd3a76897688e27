"""The scripted model for the agent tests: tests/sdk's mock upstream, scripted by conversation.

It speaks OpenAI Chat Completions, OpenAI Responses and Anthropic Messages, streaming or not by
the request's ``stream``, on 127.0.0.1 in a thread (the wire builders and the server, which
writes SSE in odd-sized flushed pieces, are tests/sdk/mock_upstream.py's). The request's
``model`` names a case of cases.py; the turn is chosen from the tool results in the request.
Every response and every native call gets an id of its own, as a real server's do.

Run as a program (for the Node tests): prints one JSON line ``{"url": ..., "cases": ...}`` and
serves until stdin closes or it is signalled.
"""

from __future__ import annotations

import ast
import itertools
import json
import sys
import threading
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1] / "sdk"))

from mock_upstream import (  # noqa: E402  (tests/sdk, put on the path above)
    MockUpstream, Reply, an_message, an_stream, every, oa_call, oa_completion, oa_stream,
    rs_call, rs_message, rs_response, rs_stream)

import cases  # noqa: E402

FRAGMENT = 7  # streamed text and arguments go out in pieces this wide


def _text_of(content) -> str:
    """A tool result's text: a string, or the text of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else json.dumps(content)


def tool_results(path: str, request: dict) -> list[str]:
    """The tool results already in the conversation, in order, in any of the three APIs."""
    if path == "/v1/chat/completions":
        return [_text_of(m.get("content")) for m in request.get("messages", [])
                if m.get("role") == "tool"]
    if path == "/v1/responses":
        items = request.get("input")
        if not isinstance(items, list):
            return []
        return [_text_of(item.get("output")) for item in items
                if isinstance(item, dict) and item.get("type") == "function_call_output"]
    if path == "/v1/messages":
        return [_text_of(block.get("content"))
                for message in request.get("messages", []) if message.get("role") == "user"
                and isinstance(message.get("content"), list)
                for block in message["content"] if block.get("type") == "tool_result"]
    return []


def _as_object(arguments: str) -> dict:
    """Anthropic's non-streamed `input` is an object: the arguments' JSON or Python literal."""
    try:
        return json.loads(arguments)
    except ValueError:
        return ast.literal_eval(arguments)


def with_server_keys(events: list[bytes]) -> list[bytes]:
    """Chat chunks as vLLM and OpenAI send them: `system_fingerprint`, `usage: null` until the
    usage chunk, `logprobs: null` in every choice (keys a proxy must not drop)."""
    out = []
    for event in events:
        if not event.startswith(b"data: {"):
            out.append(event)
            continue
        chunk = json.loads(event[len(b"data: "):])
        chunk.setdefault("system_fingerprint", "fp_mock")
        chunk.setdefault("usage", None)
        for choice in chunk["choices"]:
            choice.setdefault("logprobs", None)
        out.append(b"data: " + json.dumps(chunk).encode() + b"\n\n")
    return out


class MockModel(MockUpstream):
    """The agents' model: one scripted conversation per case, all three APIs."""

    def __init__(self) -> None:
        super().__init__()
        self.serial = itertools.count(1)

    def reply(self, path: str, request: dict) -> Reply:
        case = cases.BY_NAME.get(request.get("model", ""))
        if case is None or path not in ("/v1/chat/completions", "/v1/responses", "/v1/messages"):
            return super().reply(path, request)
        turn = case.script(tool_results(path, request))
        n = next(self.serial)
        stream = bool(request.get("stream"))
        model = case.name
        if path == "/v1/chat/completions":
            calls = [(f"call_{n}_{i}", name, args) for i, (name, args) in enumerate(turn.calls)]
            finish = "tool_calls" if calls else "stop"
            if stream:
                pieces = every(turn.text, FRAGMENT) if turn.text else []
                streamed = [(cid, name, every(args, FRAGMENT)) for cid, name, args in calls]
                events = oa_stream(model, pieces, streamed, finish, f"chatcmpl-{n}")
                return Reply(events=with_server_keys(events), content_type="text/event-stream")
            native = [oa_call(cid, name, args) for cid, name, args in calls] or None
            return Reply(body=oa_completion(model, turn.text, native, finish, f"chatcmpl-{n}"))
        if path == "/v1/responses":
            if stream:
                pieces = every(turn.text, FRAGMENT) if turn.text else []
                streamed = [(name, every(args, FRAGMENT)) for name, args in turn.calls]
                return Reply(events=rs_stream(model, pieces, streamed, f"resp_{n}", f"{n}_"),
                             content_type="text/event-stream")
            output = [rs_message(turn.text)] if turn.text else []
            output += [rs_call(i, name, args, prefix=f"{n}_")
                       for i, (name, args) in enumerate(turn.calls, start=1)]
            return Reply(body=json.dumps(rs_response(model, output, response_id=f"resp_{n}")).encode())
        calls = [(f"toolu_{n}_{i}", name, args) for i, (name, args) in enumerate(turn.calls)]
        stop = "tool_use" if calls else "end_turn"
        if stream:
            pieces = every(turn.text, FRAGMENT) if turn.text else []
            streamed = [(cid, name, every(args, FRAGMENT)) for cid, name, args in calls]
            return Reply(events=an_stream(model, pieces, streamed, stop, f"msg_{n}"),
                         content_type="text/event-stream")
        blocks = [{"type": "text", "text": turn.text}] if turn.text else []
        blocks += [{"type": "tool_use", "id": cid, "name": name, "input": _as_object(args)}
                   for cid, name, args in calls]
        return Reply(body=an_message(model, blocks, stop, f"msg_{n}"))


def main() -> None:
    model = MockModel().start()
    print(json.dumps({"url": model.url, "cases": cases.as_json()}), flush=True)
    stopped = threading.Event()

    def wait_stdin() -> None:
        sys.stdin.read()
        stopped.set()

    threading.Thread(target=wait_stdin, daemon=True).start()
    try:
        stopped.wait()
    except KeyboardInterrupt:
        pass
    model.stop()


if __name__ == "__main__":
    main()
