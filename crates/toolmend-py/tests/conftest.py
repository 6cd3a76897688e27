"""Shared tools for the package tests."""

from __future__ import annotations

import os
import sys

import pytest

# .ci/run unpacks the freshly built wheel there; elsewhere the installed package is used.
if os.environ.get("TOOLMEND_PY_SITE"):
    sys.path.insert(0, os.environ["TOOLMEND_PY_SITE"])

READ = {
    "type": "function",
    "function": {
        "name": "read",
        "description": "Read a file",
        "parameters": {
            "type": "object",
            "required": ["path"],
            "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
            "additionalProperties": False,
        },
    },
}

ANTHROPIC_READ = {
    "name": "read",
    "description": "Read a file",
    "input_schema": READ["function"]["parameters"],
}


@pytest.fixture
def tools() -> list:
    return [READ]
