"""Puts the toolmend wheel under test on the path of this process and of the engines' workers.

.ci/run unpacks the freshly built wheel into TOOLMEND_PY_SITE. Spark's and Ray's Python workers
are separate processes started by the engine: they inherit this process's environment, so the
folder goes on PYTHONPATH too (a worker that could not import toolmend fails the test), and so
does this folder (Spark pickles a test module's functions by reference).
"""

from __future__ import annotations

import os
import sys

_SITE = os.environ.get("TOOLMEND_PY_SITE")
if _SITE:
    sys.path.insert(0, _SITE)
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (_SITE, os.path.dirname(os.path.abspath(__file__)), os.environ.get("PYTHONPATH")) if p
)
