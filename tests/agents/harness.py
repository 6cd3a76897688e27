"""What every agent test shares: the routes, the case parameters, and the verdict of a run.

A case must fail directly (else it shows nothing) and succeed through toolmend; `verdict`
asserts that and records the outcome for the matrix conftest.py prints at the end.
"""

from __future__ import annotations

import os

import pytest

from cases import CASES, Case

ROUTES = ["direct", "toolmend"]
# Each model request's limit, so a proxy that hangs fails its cell instead of stalling CI.
REQUEST_TIMEOUT_S = 30.0

# (framework, variant, case) -> outcome, for the summary matrix.
OUTCOMES: dict[tuple[str, str, str], dict[str, str]] = {}


def case_params(framework: str):
    """The cases `framework`'s loop plays, as pytest parameters, named."""
    return [pytest.param(case, id=case.name) for case in CASES
            if case.frameworks is None or framework in case.frameworks]


def verdict(framework: str, variant: str, route: str, case: Case, final_text,
            invocations) -> None:
    """Record the outcome and assert it: failing directly, succeeding through toolmend."""
    ok, why = case.succeeded(final_text, invocations)
    OUTCOMES.setdefault((framework, variant, case.name), {})[route] = "pass" if ok else "fail"
    if route == "toolmend":
        assert ok, f"{framework}/{variant} through toolmend: {why}"
    else:
        assert not ok, (f"{framework}/{variant} succeeded without toolmend, so the case shows "
                        f"nothing: tool ran with {invocations}, answer {final_text!r}")


# Through-toolmend cells that wait for a proxy fix of issue #24: (framework, variant, case)
# -> the fix; "*" matches any framework or variant. Each is xfail(strict=True): it must still
# fail, so the marker breaks once the fix lands and the entry must go. None wait today.
PENDING: dict[tuple[str, str, str], str] = {}


# Through-toolmend cells no proxy can fix: the framework's own behaviour or schema decides them
# (skipped with the reason; the direct run still runs and must fail).
BEYOND_THE_PROXY: dict[tuple[str, str, str], str] = {
    ("pydantic-ai", "chat-stream", "hermes-leak"):
        "run_stream ends at the first text part, and this turn's text ('Let me look.') comes "
        "before the call, as it would before a native call",
    ("pydantic-ai", "*", "strict-omit-rename"):
        "Tool(strict=True) sends `limit` as a required integer without its default (10): the "
        "omission cannot be filled without inventing a value, so the call passes unchanged",
}


def lookup(table: dict[tuple[str, str, str], str], framework: str, variant: str,
           case: str) -> str | None:
    """The entry for a cell, the most specific key first."""
    for key in ((framework, variant, case), (framework, "*", case), ("*", variant, case),
                ("*", "*", case)):
        if key in table:
            return table[key]
    return None


def expect(request, framework: str, variant: str, route: str, case: Case) -> None:
    """Skip a through-toolmend cell in BEYOND_THE_PROXY; mark one in PENDING xfail (strict)."""
    if route == "toolmend":
        beyond = lookup(BEYOND_THE_PROXY, framework, variant, case.name)
        if beyond:
            OUTCOMES.setdefault((framework, variant, case.name), {})[route] = "n/a"
            pytest.skip(beyond)
        expect_pending(request, framework, variant, case)


def expect_pending(request, framework: str, variant: str, case: Case) -> None:
    """xfail(strict=True) when the cell is in PENDING; `AGENTS_NO_XFAIL=1` runs it plainly."""
    reason = lookup(PENDING, framework, variant, case.name)
    if reason and not os.environ.get("AGENTS_NO_XFAIL"):
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


def check(request, server, framework: str, variant: str, route: str, case: Case, run) -> None:
    """One cell: `run(root)` -> (final text, invocations) against the model or the proxy,
    judged by `verdict`; a proxy that does not start (a flag it lacks yet) fails the cell."""
    expect(request, framework, variant, route, case)
    try:
        root = server(route, case)
    except AssertionError as error:
        final, record = f"the proxy did not start: {error}", []
    else:
        final, record = run(root)
    verdict(framework, variant, route, case, final, record)
