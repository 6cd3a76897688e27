"""LiteLLM hooks in process: ``mend_stream`` on LiteLLM's own stream chunks (held fragments, a
cut-off stream, the bound) and what the guardrail records in LiteLLM's logging metadata."""

from __future__ import annotations

import asyncio
import json
import os
from typing import List

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch from outside

from litellm.types.utils import ModelResponseStream  # noqa: E402

import toolmend.integrations.litellm as tm_litellm  # noqa: E402
from conftest import ALIASED, REPAIRED  # noqa: E402
from test_litellm_proxy import READ_FILE  # noqa: E402

CUT = '{"path": "notes.t'


def chunks(arguments: str, finish="tool_calls", width=3) -> List[ModelResponseStream]:
    out = [ModelResponseStream(id="c", choices=[{"index": 0, "delta": {"role": "assistant", "tool_calls": [
        {"index": 0, "id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": ""}}]}}])]
    for i in range(0, len(arguments), width):
        out.append(ModelResponseStream(id="c", choices=[{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": arguments[i:i + width]}}]}}]))
    if finish:
        out.append(ModelResponseStream(id="c", choices=[{"index": 0, "delta": {}, "finish_reason": finish}]))
    return out


def run(items) -> List[ModelResponseStream]:
    mender, toolset = tm_litellm._cache.get([READ_FILE])

    async def source():
        for item in items:
            yield item

    async def collect():
        return [c async for c in tm_litellm.mend_stream(source(), mender, toolset)]
    return asyncio.run(collect())


def arguments_of(out) -> str:
    return "".join(tc.function.arguments or "" for c in out for ch in c.choices
                   for tc in (ch.delta.tool_calls or []))


def test_fragments_are_held_and_sent_repaired_before_the_finish():
    out = run(chunks(ALIASED))
    assert json.loads(arguments_of(out)) == REPAIRED
    [with_calls] = [i for i, c in enumerate(out) if c.choices[0].delta.tool_calls]
    assert out[with_calls + 1].choices[0].finish_reason == "tool_calls"


def test_a_cut_off_stream_still_sends_what_it_held_unrepaired():
    out = run(chunks(CUT, finish=None))
    assert arguments_of(out) == CUT  # toolmend never closes a cut-off call


def test_past_the_bound_calls_pass_through_as_sent(monkeypatch):
    monkeypatch.setattr(tm_litellm, "MAX_HELD_BYTES", 10)
    out = run(chunks(ALIASED))
    assert arguments_of(out) == ALIASED


def test_guardrail_records_its_changes_in_litellms_logging_metadata():
    guardrail = tm_litellm.ToolmendGuardrail(guardrail_name="toolmend",
                                             event_hook=["pre_call", "post_call"], default_on=True)
    data = {"tools": [READ_FILE], "metadata": {}, "messages": [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "h1", "type": "function", "function": {"name": "read_file", "arguments": ""}}]}]}
    asyncio.run(guardrail.async_pre_call_hook(None, None, data, "completion"))
    assert data["messages"][0]["tool_calls"][0]["function"]["arguments"] == "{}"
    [info] = data["metadata"]["standard_logging_guardrail_information"]
    assert info["guardrail_name"] == "toolmend" and info["guardrail_status"] == "success"
    assert info["guardrail_response"] == {"toolmend": {"history": {"repaired": 0, "emptied": 1}}}
    headers = asyncio.run(guardrail.async_post_call_response_headers_hook(data, None, None))
    assert headers == {"x-toolmend-repairs": "1"}
