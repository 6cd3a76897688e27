"""Shared tools for the framework integration tests (``toolmend.integrations.*``).

Each test drives the real framework (pinned in requirements.txt) and shows, in a
``without toolmend`` case, what the framework does on its own with the same broken call.
"""

from __future__ import annotations

import os
import sys

# .ci/run unpacks the freshly built wheel there; elsewhere the installed package is used.
if os.environ.get("TOOLMEND_PY_SITE"):
    sys.path.insert(0, os.environ["TOOLMEND_PY_SITE"])

#: The broken arguments every framework test sends: the model named the key after a
#: neighbouring tool's parameter (``file_path``) and sent an explicit null for an optional one.
ALIASED = '{"file_path": "notes.txt", "limit": null}'
#: Python-style dict text, which no JSON parser reads.
PYTHON_DICT = "{'path': 'notes.txt'}"
#: What toolmend makes of both.
REPAIRED = {"path": "notes.txt"}
#: A call no repair can save: the required ``path`` is nowhere.
UNSAVABLE = '{"limit": 3}'
