"""The tool-call API: ToolSet, Mender, Session, recover, StreamRecoverer, prepare_tools."""

from __future__ import annotations

import json

import pytest

import toolmend
from conftest import ANTHROPIC_READ, READ


def test_toolset_forms(tools):
    openai_set = toolmend.ToolSet.from_openai(tools)
    anthropic_set = toolmend.ToolSet.from_anthropic([ANTHROPIC_READ])
    assert openai_set.names == anthropic_set.names == ["read"]
    assert len(openai_set) == 1 and "read" in openai_set and "write" not in openai_set
    assert openai_set.rejected == []


def test_toolset_errors():
    with pytest.raises(toolmend.ToolSpecError):
        toolmend.ToolSet({"name": "not a list"})
    with pytest.raises(TypeError):
        toolmend.ToolSet([object()])
    bad = toolmend.ToolSet([{"nope": 1}, {"name": "ok", "parameters": {"type": "object"}}])
    assert bad.names == ["ok"] and len(bad.rejected) == 1


def test_valid_call_is_untouched(tools):
    mender = toolmend.Mender(tools)
    raw = '{"path":  "a.txt"}'
    call = mender.repair_call("read", raw)
    assert call.status == "valid"
    assert call.arguments_text == raw
    assert call.arguments == {"path": "a.txt"}
    assert call.repairs == [] and call.error is None and call.outcome is None
    assert call.dispatchable


def test_repaired_call_reports_each_repair(tools):
    mender = toolmend.Mender(toolmend.ToolSet.from_openai(tools))
    call = mender.repair_call("read", '{"file_path": "/src/main.rs", "limit": null}')
    assert call.status == "repaired"
    assert call.arguments_text == '{"path":"/src/main.rs"}'
    assert call.arguments == {"path": "/src/main.rs"}
    assert call.has("field_renamed") and call.has("null_stripped")
    assert {r.kind for r in call.repairs} >= {"field_renamed", "null_stripped"}
    assert call.outcome == "local-salvage"
    assert set(call.repairs[0].kind) and isinstance(call.repairs[0].path, str)


def test_invalid_call_gets_a_retry_message(tools):
    call = toolmend.Mender(tools).repair_call("read", '{"limit": 5}')
    assert call.status == "invalid" and not call.dispatchable
    assert call.arguments == {"limit": 5}  # parsed, but not valid
    assert "`/path` is required but missing" in call.error
    assert call.outcome == "re-prompt"


def test_mender_options_are_checked(tools):
    with pytest.raises(TypeError):
        toolmend.Mender(tools, bogus=1)
    with pytest.raises(ValueError):
        toolmend.Mender(tools, recover="everything")
    toolmend.Mender(tools, recover="all", model="qwen3", include_values=True, max_depth=16)


def test_key_budget_is_a_mender_option():
    # Two key patterns beside `additionalProperties`: each key is matched against both, twice
    # (once for its own schema, once to decide whether `additionalProperties` applies).
    tools = [{"type": "function", "function": {"name": "env", "parameters": {
        "type": "object",
        "patternProperties": {"^[A-Z_]+$": {"type": "string"}, "^x-": {"type": "string"}},
        "additionalProperties": False}}}]
    call = json.dumps({f"K_{chr(65 + i)}": "v" for i in range(10)})  # 10 keys x 4 = 40 matches
    assert toolmend.Mender(tools).repair_call("env", call).status == "valid"
    refused = toolmend.Mender(tools, max_call_key_matches=39).repair_call("env", call)
    assert refused.status == "invalid" and not refused.dispatchable
    assert "40 pattern matches" in refused.error and "budget of 39" in refused.error
    within = toolmend.Mender(tools, max_call_key_matches=40).repair_call("env", call)
    assert within.status == "valid" and within.arguments_text == call


def test_error_budget_is_a_mender_option():
    # Three missing names in each of two objects: 6 errors, against max_call_errors plus one
    # per value of the call (root, list, two objects: 4).
    tools = [{"type": "function", "function": {"name": "batch", "parameters": {
        "type": "object", "properties": {"x": {"type": "array", "items": {
            "type": "object", "required": ["a", "b", "c"]}}}}}}]
    call = json.dumps({"x": [{}, {}]})
    refused = toolmend.Mender(tools, max_call_errors=1).repair_call("batch", call)
    assert refused.status == "invalid" and "budget of 5" in refused.error
    checked = toolmend.Mender(tools, max_call_errors=2).repair_call("batch", call)
    assert checked.status == "invalid" and "budget" not in checked.error
    assert "`/x/1/c` is required" in checked.error


def test_stats_count_calls(tools):
    mender = toolmend.Mender(tools)
    mender.repair_call("read", '{"path": "a"}')
    mender.repair_call("read", '{"file_path": "a"}')
    stats = mender.stats()
    assert stats["calls"] == 2
    assert mender.tool_names == ["read"]


def test_run_turn_with_session(tools):
    mender = toolmend.Mender(tools, recover="content")
    session = toolmend.Session()
    message = {
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{'path': 'x'}"}}],
    }
    result = mender.run_turn(session, message)
    assert [c.status for c in result.calls] == ["repaired"]
    assert result.calls[0].id == "c1" and result.calls[0].native_index == 0
    assert result.calls[0].arguments == {"path": "x"}
    assert result.report["repaired"] == 1


def test_run_turn_recovers_calls_from_text(tools):
    mender = toolmend.Mender(tools, recover="content")
    text = 'Reading.\n<tool_call>\n{"name": "read", "arguments": {"path": "a.rs"}}\n</tool_call>'
    result = mender.run_turn(toolmend.Session(), {"content": text})
    assert [c.status for c in result.calls] == ["recovered"]
    assert result.calls[0].origin == "content" and result.calls[0].native_index is None
    assert "tool_call" not in (result.content or "")


def test_session_storm_breaker(tools):
    mender = toolmend.Mender(tools)
    session = toolmend.Session(window=8, threshold=2)
    message = {"tool_calls": [{"id": "x", "function": {"name": "read", "arguments": '{"path": "a"}'}}]}
    statuses = [mender.run_turn(session, message).calls[0].status for _ in range(3)]
    assert statuses[0] == "valid" and "suppressed" in statuses
    session.new_user_turn()


def test_session_limits_not_given_keep_the_library_defaults(tools):
    # Only `window` given: the threshold and the retry budget stay the library's (3 and 1), as
    # with `Session()`; they used to fall back to other numbers (3 and 2).
    mender = toolmend.Mender(tools)
    bad = {"tool_calls": [{"id": "x", "function": {"name": "read", "arguments": '{"limit": 1}'}}]}
    def outcomes(session):
        return [mender.run_turn(session, bad).calls[0].outcome for _ in range(3)]
    assert outcomes(toolmend.Session(window=6)) == outcomes(toolmend.Session())


def test_recover_and_stream(tools):
    text = 'Sure.\n<tool_call>\n{"name": "read", "arguments": {"path": "a.rs"}}\n</tool_call>\nDone.'
    found = toolmend.recover(text, tools)
    assert [c.name for c in found.calls] == ["read"]
    assert json.loads(found.calls[0].arguments) == {"path": "a.rs"}
    assert found.calls[0].channel == "content" and found.calls[0].family
    assert "tool_call" not in found.text and found.text.startswith("Sure.")
    start, end = found.calls[0].span
    assert text[start:end].startswith("<tool_call>")
    with pytest.raises(ValueError):
        toolmend.recover(text, tools, channel="elsewhere")

    stream = toolmend.StreamRecoverer(toolmend.ToolSet(tools), channel="reasoning")
    released, calls = "", []
    for i in range(0, len(text), 7):
        out = stream.feed(text[i : i + 7])
        released += out.text
        calls += out.calls
    out = stream.finish()
    released += out.text
    calls += out.calls
    assert released == found.text
    assert [c.name for c in calls] == ["read"] and calls[0].channel == "reasoning"
    with pytest.raises(toolmend.ToolmendError):
        stream.finish()
    with pytest.raises(toolmend.ToolmendError):
        stream.feed("more")


# A Cohere action list whose second entry cannot be read (its parameters are a string).
LOST_ENTRY = '{"tool_name": "read", "parameters": "a.rs"}'
ACTIONS = (
    'Reading.\n<|START_ACTION|>[{"tool_name": "read", "parameters": {"path": "a"}}, '
    + LOST_ENTRY
    + ', {"tool_name": "read", "parameters": {"path": "b"}}]<|END_ACTION|>'
)


def test_an_unreadable_list_entry_is_listed_as_lost(tools):
    found = toolmend.recover(ACTIONS, tools)
    assert [json.loads(c.arguments) for c in found.calls] == [{"path": "a"}, {"path": "b"}]
    [lost] = found.lost
    assert isinstance(lost, toolmend.LostCall)
    assert (lost.name, lost.family, lost.text, lost.position) == ("read", "cohere", LOST_ENTRY, 1)
    assert lost.span == found.calls[0].span and lost.channel == "content"
    assert repr(found).endswith("lost=['read'])") and repr(lost).startswith("LostCall(name='read'")
    d = found.to_dict()
    assert d["lost"] == [lost.to_dict()] and d["lost"][0]["position"] == 1
    json.dumps(d)
    # Nothing lost: an empty list, and the repr does not mention it.
    plain = toolmend.recover('<tool_call>{"name": "read", "arguments": {"path": "a"}}</tool_call>', tools)
    assert plain.lost == [] and "lost" not in repr(plain)


@pytest.mark.parametrize("size", [1, 7, 64, 10_000])
def test_a_stream_lists_a_lost_entry_once_in_its_place(tools, size):
    whole = toolmend.recover(ACTIONS, tools, channel="reasoning")
    stream = toolmend.StreamRecoverer(tools, channel="reasoning")
    outs = [stream.feed(ACTIONS[i : i + size]) for i in range(0, len(ACTIONS), size)]
    outs.append(stream.finish())
    lost = [c.to_dict() for out in outs for c in out.lost]
    assert lost == [c.to_dict() for c in whole.lost] and lost[0]["channel"] == "reasoning"


def test_prepare_tools(tools):
    pattern_tool = {
        "type": "function",
        "function": {
            "name": "grep",
            "parameters": {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[a-z]+$"}}},
        },
    }
    prepared = toolmend.prepare_tools([pattern_tool], model="kimi-k2")
    assert prepared[0]["function"]["parameters"]["properties"]["id"]["pattern"] == "[a-z]+"
    kept = toolmend.prepare_tools([pattern_tool], model="kimi-k2", strip_anchors=False)
    assert kept[0]["function"]["parameters"]["properties"]["id"]["pattern"] == "^[a-z]+$"
    with pytest.raises(TypeError):
        toolmend.prepare_tools(tools, nope=True)


def test_repair_kinds_lists_the_catalogue():
    kinds = toolmend.repair_kinds()
    assert "field_renamed" in kinds and "truncation_closed" in kinds


def test_version():
    assert isinstance(toolmend.__version__, str) and toolmend.__version__
