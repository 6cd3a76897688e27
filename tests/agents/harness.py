"""What every agent test shares: the routes, the case parameters, and the verdict of a run.

A case must fail directly (else it shows nothing) and succeed through toolmend; `verdict`
asserts that and records the outcome for the matrix conftest.py prints at the end.
"""

from __future__ import annotations

import os

import pytest

from cases import CASES, Case

ROUTES = ["direct", "toolmend"]

# (framework, variant, case) -> outcome, for the summary matrix.
OUTCOMES: dict[tuple[str, str, str], dict[str, str]] = {}


def case_params(cases=CASES):
    return [pytest.param(case, id=case.name) for case in cases]


def verdict(framework: str, variant: str, route: str, case: Case, final_text, invocations,
            direct_ok: bool = False) -> None:
    """Record the outcome and assert it: failing directly, succeeding through toolmend.

    `direct_ok` marks a case the framework copes with by itself (then the direct run must
    succeed too, and the cell says so)."""
    ok, why = case.succeeded(final_text, invocations)
    OUTCOMES.setdefault((framework, variant, case.name), {})[route] = "pass" if ok else "fail"
    if route == "toolmend":
        assert ok, f"{framework}/{variant} through toolmend: {why}"
    elif direct_ok:
        assert ok, f"{framework}/{variant} directly was expected to cope: {why}"
    else:
        assert not ok, (f"{framework}/{variant} succeeded without toolmend, so the case shows "
                        f"nothing: tool ran with {invocations}, answer {final_text!r}")


def xfail_unless_fixed(request, reason: str) -> None:
    """A through-toolmend run that waits for a proxy fix: strict, so it breaks when fixed."""
    if os.environ.get("AGENTS_NO_XFAIL"):
        return
    request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
