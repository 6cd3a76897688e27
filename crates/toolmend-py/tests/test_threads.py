"""A Mender shared across threads gives each thread the same answers as one thread alone."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import toolmend


def test_mender_shared_across_threads(tools):
    mender = toolmend.Mender(tools)
    inputs = [
        ('{"path": "a"}', "valid"),
        ('{"file_path": "b"}', "repaired"),
        ('{"limit": 1}', "invalid"),
        # Large enough to be processed with the GIL released.
        ("{'path': '" + "x" * 40000 + "'}", "repaired"),
    ]

    def work(i: int) -> list:
        out = []
        for text, _ in inputs:
            call = mender.repair_call("read", text)
            out.append((call.status, call.arguments_text))
        return out

    alone = work(0)
    assert [s for s, _ in alone] == [s for _, s in inputs]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(64)))
    assert all(r == alone for r in results)
    assert mender.stats()["calls"] == 65 * len(inputs)


def test_loads_across_threads():
    text = "[" + ", ".join("{'k': %d}" % i for i in range(5000))
    expected = [{"k": i} for i in range(5000)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: toolmend.loads(text), range(16)))
    assert all(r == expected for r in results)
