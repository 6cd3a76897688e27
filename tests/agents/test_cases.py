"""The suite's own data stays consistent (no framework, no proxy)."""

from __future__ import annotations

import json

from cases import READ_FILE, TOOLS_FILE


def test_tools_file_is_read_file():
    assert json.loads(TOOLS_FILE.read_text()) == [{"type": "function", "function": READ_FILE}]
