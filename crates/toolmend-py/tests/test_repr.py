"""Every public class has a repr that says what it holds, and results convert to plain dicts."""

from __future__ import annotations

import json

import toolmend

HERMES = 'Reading.\n<tool_call>\n{"name": "read", "arguments": {"path": "a.rs"}}\n</tool_call>'


def test_reprs_name_what_they_hold(tools):
    mender = toolmend.Mender(tools)
    assert repr(mender) == "Mender(tools=['read'])"
    assert repr(toolmend.ToolSet(tools)) == "ToolSet(['read'])"
    assert repr(toolmend.Session(window=4)) == "Session(window=4)"
    call = mender.repair_call("read", '{"file_path": "a.txt"}')
    assert repr(call).startswith("Call(name='read', status='repaired'")
    assert "repairs=[" in repr(call)
    recovered = toolmend.recover(HERMES, tools)
    assert repr(recovered) == "Recovered(text='Reading.\\n', calls=['read'])" or \
        repr(recovered).startswith("Recovered(text=")
    assert "0x" not in repr(recovered)
    assert repr(toolmend.StreamRecoverer(tools)).startswith("StreamRecoverer(tools=['read']")
    turn = mender.run_turn(toolmend.Session(), {"content": None, "tool_calls": [
        {"id": "c1", "function": {"name": "read", "arguments": '{"path": "a"}'}}]})
    assert repr(turn) == "TurnResult(calls=['read:valid'], content=None)"


def test_long_arguments_are_elided_in_repr(tools):
    call = toolmend.Mender(tools).repair_call("read", json.dumps({"path": "x" * 10_000}))
    assert len(repr(call)) < 400 and "…" in repr(call)


def test_results_convert_to_plain_dicts(tools):
    mender = toolmend.Mender(tools)
    call = mender.repair_call("read", "{'file_path': 'a.txt'}")
    d = call.to_dict()
    assert d["status"] == "repaired" and d["arguments"] == {"path": "a.txt"}
    assert d["dispatchable"] is True
    assert all(set(r) == {"kind", "path"} for r in d["repairs"])
    json.dumps(d)  # plain values only
    turn = toolmend.Mender(tools, recover="content").run_turn(toolmend.Session(), {"content": HERMES})
    t = turn.to_dict()
    assert [c["name"] for c in t["calls"]] == ["read"] and isinstance(t["report"], dict)
    json.dumps(t)
    r = toolmend.recover(HERMES, tools).to_dict()
    assert r["calls"][0]["name"] == "read" and r["calls"][0]["span"][0] >= 0
    json.dumps(r)
