"""Fixtures: the scripted model, `toolmend serve` in front of it, and the matrix of outcomes.

The proxy is tests/sdk's `Proxy` (the real binary from `TOOLMEND_BIN`, default
`target/debug/toolmend`), one per set of flags, started once per session and required to exit
0 on SIGTERM. Every test runs one framework's own agent loop on one case, either directly
against the model or through the proxy, and hands the outcome to `verdict`: a case must fail
directly (else it shows nothing) and succeed through toolmend. The matrix of outcomes is
printed at the end of the run.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from cases import Case  # noqa: E402
from harness import OUTCOMES  # noqa: E402
from mock_model import MockModel  # noqa: E402  (also puts tests/sdk on sys.path)

_spec = importlib.util.spec_from_file_location("sdk_conftest", HERE.parent / "sdk" / "conftest.py")
sdk_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sdk_conftest)
Proxy = sdk_conftest.Proxy

BASE_FLAGS = ("--recover", "content")


@pytest.fixture(scope="session")
def model():
    mock = MockModel().start()
    yield mock
    mock.stop()


@pytest.fixture(scope="session")
def proxies(model):
    """`proxies(flags)`: the session's proxy with those flags (started on first use)."""
    started: dict[tuple[str, ...], Proxy] = {}

    def get(flags: tuple[str, ...]) -> Proxy:
        if flags not in started:
            started[flags] = Proxy(model.url, *BASE_FLAGS, *flags)
        return started[flags]

    yield get
    failures = []
    for flags, proxy in started.items():
        code = proxy.stop()
        if code != 0:
            failures.append(f"toolmend serve {' '.join(flags)} exited {code} on SIGTERM; stderr:\n"
                            + "\n".join(proxy.lines))
    assert not failures, "\n".join(failures)


@pytest.fixture
def server(model, proxies):
    """`server(route, case)`: the root URL the agent talks to (no `/v1`)."""

    def get(route: str, case: Case) -> str:
        return model.url if route == "direct" else proxies(case.flags).url

    return get


def pytest_terminal_summary(terminalreporter):
    if not OUTCOMES:
        return
    write = terminalreporter.write_line
    write("")
    write("agents matrix (direct / through toolmend):")
    for (framework, variant, case), cell in sorted(OUTCOMES.items()):
        write(f"  {framework:<14} {variant:<18} {case:<20} "
              f"{cell.get('direct', '-'):>5} / {cell.get('toolmend', '-')}")
