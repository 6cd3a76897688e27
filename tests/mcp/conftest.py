"""Paths the MCP relay tests need, from the environment `.ci/run` sets."""
import os
import pathlib

import pytest

HERE = pathlib.Path(__file__).parent


def _required(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set (.ci/run sets it)")
    return value


@pytest.fixture(scope="session")
def toolmend_bin():
    """The `toolmend` binary under test."""
    return _required("TOOLMEND_BIN")


@pytest.fixture(scope="session")
def everything_server():
    """The entry script of `@modelcontextprotocol/server-everything`, installed by `.ci/run`."""
    path = _required("MCP_EVERYTHING_JS")
    assert pathlib.Path(path).is_file(), path
    return path
