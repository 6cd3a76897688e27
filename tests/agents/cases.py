"""The agent cases: what the scripted model sends each turn, and what the agent must end with.

A case is a whole conversation. The request's ``model`` names the case; the model's next turn
depends only on the tool results already in the conversation (stateless, like a real model),
so a framework that retries, re-prompts or runs calls in parallel still gets a coherent script.

Success, for every framework alike: the agent's tools ran with exactly ``expected`` (typed, in
any order) and the run ended with the model's final answer, which quotes every tool result.
A framework that swallows a broken call, runs a tool with wrong arguments or takes leaked
markup for the answer fails the case.

Stdlib only: the Node tests read the same cases from ``python3 mock_model.py`` (``as_json``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

# ---- the tools (JSON Schema; the Python and Node tests declare the same tools natively) ------

READ_FILE = {
    "name": "read_file",
    "description": "Read the first `limit` lines of a file.",
    "parameters": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "limit": {"type": "integer"},
            "follow": {"type": "boolean"},
        },
        "required": ["path", "limit", "follow"],
        "additionalProperties": False,
    },
}
READ_MANY = {
    "name": "read_many",
    "description": "Read the first `limit` lines of several files.",
    "parameters": {
        "type": "object",
        "properties": {
            "paths": {"type": "array", "items": {"type": "string"}},
            "limit": {"type": "integer"},
        },
        "required": ["paths", "limit"],
        "additionalProperties": False,
    },
}
# OpenAI strict mode's spelling of optional parameters (what the OpenAI Agents SDK sends for
# `limit: int = 10, encoding: str | None = None`): every property required, the optional ones
# keep a default or admit null.
READ_STRICT = {
    "name": "read_text",
    "description": "Read a text file.",
    "parameters": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "follow": {"type": "boolean"},
            "limit": {"type": "integer", "default": 10},
            "encoding": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["path", "follow", "limit", "encoding"],
        "additionalProperties": False,
    },
}
TOOLS = {tool["name"]: tool for tool in (READ_FILE, READ_MANY, READ_STRICT)}


def canonical(args: dict) -> str:
    """One spelling of an argument object, for comparing and quoting results."""
    return json.dumps(args, sort_keys=True, separators=(",", ":"))


def tool_output(name: str, args: dict) -> str:
    """What every test's tool returns: its name and the arguments it got, canonical."""
    return f"ok {name} {canonical(args)}"


# ---- the model's turns ---------------------------------------------------------------------


@dataclass
class Turn:
    """One assistant turn: text (may hold leaked markup) and native calls (name, arguments)."""

    text: str | None = None
    calls: list[tuple[str, str]] = field(default_factory=list)


FINAL_PREFIX = "DONE: "


def final(results: list[str]) -> Turn:
    """The model's answer once tools have run: every tool result, quoted."""
    return Turn(text=FINAL_PREFIX + " | ".join(results))


def hermes(*calls: tuple[str, dict]) -> str:
    """Hermes/Qwen `<tool_call>` blocks, one per call, separated by a newline."""
    return "\n".join(
        "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"
        for name, args in calls)


@dataclass
class Case:
    """One scripted conversation and what the agent must end with."""

    name: str
    title: str
    tool: dict
    expected: list[dict]
    script: Callable[[list[str]], Turn]
    # The proxy flags this case needs beyond `--recover content`.
    flags: tuple[str, ...] = ()
    # The client sends `tools` with its first request only (later turns carry none).
    tools_first_turn_only: bool = False
    # The frameworks whose loops can play this case (None: all).
    frameworks: tuple[str, ...] | None = None

    def succeeded(self, final_text: str | None, invocations: list[dict]) -> tuple[bool, str]:
        """Whether an agent run did the job; the reason when it did not."""
        got = sorted(canonical(args) for args in invocations)
        want = sorted(canonical(args) for args in self.expected)
        if got != want:
            return False, f"tool ran with {got}, expected {want}; final answer {final_text!r}"
        text = final_text or ""
        if not text.startswith(FINAL_PREFIX):
            return False, f"the run ended with {text!r}, not the model's final answer"
        missing = [args for args in self.expected if tool_output(self.tool["name"], args) not in text]
        if missing:
            return False, f"the final answer {text!r} lacks the results of {missing}"
        return True, ""


def one_call(name: str, arguments: str) -> Callable[[list[str]], Turn]:
    """Call once, then answer."""
    return lambda results: final(results) if results else Turn(calls=[(name, arguments)])


def leaked(turns: list[str]) -> Callable[[list[str]], Turn]:
    """Leak the k-th text when k tool results are in; answer after the last."""
    return lambda results: Turn(text=turns[len(results)]) if len(results) < len(turns) else final(results)


RETRY_MARK = "Expected:"


def reprompted(hopeless: str, fixed: str) -> Callable[[list[str]], Turn]:
    """A call nothing can save; the model fixes it only when told the schema's expected shape
    (toolmend's retry message says `Expected: {...}`); a bare error makes it give up."""

    def script(results: list[str]) -> Turn:
        if any(result.startswith("ok ") for result in results):
            return final(results)
        if results and RETRY_MARK in results[-1]:
            return Turn(calls=[("read_file", fixed)])
        if results:
            return final(results)
        return Turn(calls=[("read_file", hopeless)])

    return script


def second_call_broken(first: str, second: str) -> Callable[[list[str]], Turn]:
    """A valid call, then (one tool result in) a broken one, then the answer."""

    def script(results: list[str]) -> Turn:
        if not results:
            return Turn(calls=[("read_file", first)])
        if len(results) == 1:
            return Turn(calls=[("read_file", second)])
        return final(results)

    return script


# `--tools FILE` for requests that carry none: cases.py's READ_FILE as a Chat tools array
# (test_cases.py checks the file still says what READ_FILE says).
TOOLS_FILE = Path(__file__).resolve().parent / "read_file.tools.json"

HOSTS = {"path": "/etc/hosts", "limit": 3, "follow": True}
A = {"path": "/a.txt", "limit": 5, "follow": False}
B = {"path": "/b.txt", "limit": 5, "follow": False}

CASES = [
    Case("rename-int-literal",
         "`file_path` for `path`, \"3\" for an integer, a Python dict literal",
         READ_FILE, [HOSTS],
         one_call("read_file", "{'file_path': '/etc/hosts', 'limit': '3', 'follow': True}")),
    Case("stringified-array",
         "an array sent as a JSON string",
         READ_MANY, [{"paths": ["a.rs", "b.rs"], "limit": 2}],
         one_call("read_many", '{"paths": "[\\"a.rs\\", \\"b.rs\\"]", "limit": 2}')),
    Case("hermes-leak",
         "a Hermes `<tool_call>` block in the text, no native call",
         READ_FILE, [HOSTS],
         leaked(["Let me look.\n" + hermes(("read_file", HOSTS))])),
    Case("hermes-two-turns",
         "leaked calls in two turns of one conversation (recovered ids must differ)",
         READ_FILE, [A, B],
         leaked([hermes(("read_file", A)), hermes(("read_file", B))])),
    Case("strict-omit-rename",
         "strict schema: optional `limit` (default) and `encoding` (nullable) omitted, `path` renamed",
         READ_STRICT, [{"path": "/etc/hosts", "follow": False, "limit": 10, "encoding": None}],
         one_call("read_text", '{"file_path": "/etc/hosts", "follow": false}')),
    Case("hermes-two-blocks",
         "two `<tool_call>` blocks separated by a newline (no text may be left)",
         READ_FILE, [A, B],
         leaked([hermes(("read_file", A), ("read_file", B))])),
    Case("reprompt",
         "a call nothing can save (no `path` at all); fixed after toolmend's re-prompt",
         READ_FILE, [HOSTS],
         reprompted('{"limit": 3, "follow": true}', json.dumps(HOSTS)),
         flags=("--reprompt", "1")),
    Case("later-turn-no-tools",
         "a client that sends `tools` on its first request only; the second turn's call is broken",
         READ_FILE, [A, B],
         second_call_broken(json.dumps(A), '{"file_path": "/b.txt", "limit": "5", "follow": false}'),
         flags=("--tools", str(TOOLS_FILE)), tools_first_turn_only=True,
         frameworks=("litellm",)),
]
BY_NAME = {case.name: case for case in CASES}


def as_json() -> dict:
    """The cases the AI SDK's loop plays, as data, for the Node tests."""
    return {case.name: {"title": case.title, "tool": case.tool, "expected": case.expected,
                        "flags": list(case.flags)} for case in CASES
            if case.frameworks is None or "ai-sdk" in case.frameworks}
