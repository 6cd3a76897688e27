"""Shared tools for the package tests."""

from __future__ import annotations

import pytest

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
