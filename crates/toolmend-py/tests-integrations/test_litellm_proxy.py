"""LiteLLM: the real LiteLLM proxy (a process on 127.0.0.1) with ``ToolmendGuardrail`` in its
``config.yaml``, in front of a scripted upstream, called with the official ``openai`` client.

Each check also runs against the same proxy without the guardrail, where it must fail.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import openai
import pytest

from conftest import ALIASED, REPAIRED
from mock_openai import VALID, MockOpenAI

START_TIMEOUT_S = 120.0
READ_FILE = {"type": "function", "function": {
    "name": "read_file", "description": "Read a text file.",
    "parameters": {"type": "object", "required": ["path"], "additionalProperties": False,
                   "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}}}
USER = [{"role": "user", "content": "read notes.txt"}]
GUARDRAIL = """
guardrails:
  - guardrail_name: toolmend
    litellm_params:
      guardrail: toolmend.integrations.litellm.ToolmendGuardrail
      mode: [pre_call, post_call]
      default_on: true
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiteLLMProxy:
    """``litellm --config`` as a child process; ready once /health/liveliness answers."""

    def __init__(self, upstream: str, folder: Path, guardrail: bool) -> None:
        models = "\n".join(
            f"  - model_name: {name}\n    litellm_params:\n      model: openai/{name}\n"
            f"      api_base: {upstream}\n      api_key: sk-mock"
            for name in ("aliased", "valid", "hermes", "echo"))
        config = folder / "config.yaml"
        config.write_text("model_list:\n" + models + "\n" + (GUARDRAIL if guardrail else ""))
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(folder / "proxy.log", "w+")
        env = dict(os.environ)
        if os.environ.get("TOOLMEND_PY_SITE"):
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (os.environ["TOOLMEND_PY_SITE"], env.get("PYTHONPATH")) if p)
        env.pop("DATABASE_URL", None)
        # The proxy refuses to start open; a key made for this run (no database: checked in memory).
        self.key = "sk-" + secrets.token_hex(32)
        env["LITELLM_MASTER_KEY"] = self.key
        env["LITELLM_LOG"] = "INFO"
        # The bundled model cost map: no fetch from outside the machine.
        env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        env["LITELLM_TELEMETRY"] = "False"
        env["NO_DOCS"] = "True"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "litellm.proxy.proxy_cli", "--config", str(config),
             "--host", "127.0.0.1", "--port", str(self.port), "--num_workers", "1"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=folder)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                with urllib.request.urlopen(self.url + "/health/liveliness", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        output = self.output()
        self.stop()
        raise AssertionError(f"LiteLLM proxy did not start (exit {self.process.returncode}):\n"
                             + output)

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-5000:]

    def client(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.url + "/v1", api_key=self.key, max_retries=0)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


@pytest.fixture(scope="module")
def upstream():
    mock = MockOpenAI().start()
    yield mock
    mock.stop()


@pytest.fixture(scope="module", params=["toolmend", "without-toolmend"])
def proxy(request, upstream, tmp_path_factory):
    with_guardrail = request.param == "toolmend"
    p = LiteLLMProxy(upstream.url, tmp_path_factory.mktemp(request.param), with_guardrail)
    p.with_toolmend = with_guardrail
    yield p
    p.stop()


def expect(proxy, check) -> None:
    """``check`` passes through the guardrail and fails without it (the test can fail)."""
    if proxy.with_toolmend:
        check()
    else:
        with pytest.raises(AssertionError):
            check()


def test_broken_call_comes_back_repaired(proxy):
    raw = proxy.client().chat.completions.with_raw_response.create(
        model="aliased", messages=USER, tools=[READ_FILE])
    completion = raw.parse()

    def check():
        [call] = completion.choices[0].message.tool_calls
        assert json.loads(call.function.arguments) == REPAIRED, call.function.arguments
        assert call.id == "call_1" and call.function.name == "read_file"
        assert raw.headers.get("x-toolmend-repairs") == "1"

    expect(proxy, check)


def test_call_leaked_into_text_becomes_a_tool_call(proxy):
    completion = proxy.client().chat.completions.create(
        model="hermes", messages=USER, tools=[READ_FILE])
    choice = completion.choices[0]

    def check():
        assert [json.loads(c.function.arguments) for c in choice.message.tool_calls or []] == [REPAIRED]
        assert choice.message.content.strip() == "Let me look."
        assert choice.finish_reason == "tool_calls"

    expect(proxy, check)


def _streamed(proxy, model: str):
    stream = proxy.client().chat.completions.create(
        model=model, messages=USER, tools=[READ_FILE], stream=True)
    calls: dict = {}
    content = ""
    finish = None
    for chunk in stream:
        for choice in chunk.choices:
            content += choice.delta.content or ""
            for tc in choice.delta.tool_calls or []:
                entry = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
                entry["id"] = tc.id or entry["id"]
                entry["name"] += (tc.function.name or "") if tc.function else ""
                entry["arguments"] += (tc.function.arguments or "") if tc.function else ""
            finish = choice.finish_reason or finish
    return content, [calls[i] for i in sorted(calls)], finish


def test_broken_streamed_call_comes_back_repaired(proxy):
    content, calls, finish = _streamed(proxy, "aliased")

    def check():
        assert [json.loads(c["arguments"]) for c in calls] == [REPAIRED], calls
        assert calls[0]["name"] == "read_file" and calls[0]["id"] == "call_1"
        assert finish == "tool_calls"

    expect(proxy, check)


def test_call_leaked_into_streamed_text_becomes_a_tool_call(proxy):
    content, calls, finish = _streamed(proxy, "hermes")

    def check():
        assert "<tool_call>" not in content and content.strip() == "Let me look."
        assert [json.loads(c["arguments"]) for c in calls] == [REPAIRED]
        assert finish == "tool_calls"

    expect(proxy, check)


def test_valid_call_is_byte_identical(proxy):
    completion = proxy.client().chat.completions.create(
        model="valid", messages=USER, tools=[READ_FILE])
    assert completion.choices[0].message.tool_calls[0].function.arguments == VALID
    _, calls, _ = _streamed(proxy, "valid")
    assert [c["arguments"] for c in calls] == [VALID]


def test_history_with_empty_arguments_reaches_the_upstream_repaired(proxy, upstream):
    history = USER + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "h1", "type": "function", "function": {"name": "read_file", "arguments": ""}},
            {"id": "h2", "type": "function",
             "function": {"name": "read_file", "arguments": "{'path': 'notes.txt'}"}},
            {"id": "h3", "type": "function", "function": {"name": "read_file", "arguments": VALID}}]},
        {"role": "tool", "tool_call_id": "h1", "content": "error"},
        {"role": "tool", "tool_call_id": "h2", "content": "contents"},
        {"role": "tool", "tool_call_id": "h3", "content": "contents"},
        {"role": "user", "content": "thanks"},
    ]
    upstream.requests.clear()
    proxy.client().chat.completions.create(model="echo", messages=history, tools=[READ_FILE])
    [sent] = upstream.requests
    [assistant] = [m for m in sent["messages"] if m["role"] == "assistant"]
    arguments = [tc["function"]["arguments"] for tc in assistant["tool_calls"]]

    # Nothing of toolmend's own bookkeeping travels upstream.
    assert "toolmend" not in json.dumps(sent)

    def check():
        assert arguments[0] == "{}", arguments
        assert json.loads(arguments[1]) == REPAIRED
        assert arguments[2] == VALID
        assert [m.get("content") for m in sent["messages"] if m["role"] != "assistant"] == \
            [m.get("content") for m in history if m["role"] != "assistant"]

    expect(proxy, check)
