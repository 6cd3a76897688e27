"""The bytes between the frameworks and the model: what the proxy's repaired and recovered Chat
stream chunks keep of the chunks the model sent (issue #24 item 4). No framework here fails on
a dropped `logprobs` or `usage: null`, but clients that read them do (usage accounting,
logprob consumers), so the proxy must keep every key of the chunk it rewrites."""

from __future__ import annotations

import json
import urllib.request

import pytest

from cases import BY_NAME
from harness import expect_pending

CHUNK_KEYS = {"id", "object", "created", "model", "system_fingerprint", "choices", "usage"}
CHOICE_KEYS = {"index", "delta", "logprobs", "finish_reason"}


def chat_stream(root: str, case) -> list[dict]:
    body = {"model": case.name, "stream": True,
            "messages": [{"role": "user", "content": "Read it."}],
            "tools": [{"type": "function", "function": case.tool}]}
    request = urllib.request.Request(root + "/v1/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    return [json.loads(line[len("data: "):]) for line in text.splitlines()
            if line.startswith("data: {")]


@pytest.mark.parametrize("name", ["rename-int-literal", "hermes-leak"])
def test_rewritten_chunks_keep_every_key(model, proxies, request, name):
    case = BY_NAME[name]
    expect_pending(request, "wire", "chat-stream", case)
    upstream = chat_stream(model.url, case)
    assert all(set(chunk) == CHUNK_KEYS for chunk in upstream)  # the mock's own shape
    proxied = chat_stream(proxies(case.flags).url, case)
    calls = [chunk for chunk in proxied for choice in chunk["choices"]
             if choice["delta"].get("tool_calls")]
    assert calls, f"no call came through: {proxied}"
    for chunk in proxied:
        assert set(chunk) == CHUNK_KEYS, f"chunk keys {sorted(set(chunk))}: {chunk}"
        for choice in chunk["choices"]:
            assert set(choice) == CHOICE_KEYS, f"choice keys {sorted(set(choice))}: {chunk}"
