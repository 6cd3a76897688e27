"""`Mender.repair_call` refills a `Call` it handed out once Python has let go of it.

The mender keeps the last two `Call`s it returned; when nothing else holds one any more, the next
answer is written into that object instead of freeing it and making a new one (issue #31, the
Python crossing). No caller may be able to tell: a result that is still held, or any object read
from it, keeps its answer.
"""

from __future__ import annotations

import sys
import weakref

import pytest

import toolmend

VALID = '{"path": "a"}'
REPAIRED = '{"file_path": "b", "limit": "3"}'
INVALID = '{"limit": 1}'


def test_a_dropped_result_is_refilled_with_the_next_answer(tools):
    mender = toolmend.Mender(tools)
    first = mender.repair_call("read", REPAIRED)
    assert first.arguments == {"path": "b", "limit": 3}
    kept = id(first)
    del first
    second = mender.repair_call("read", INVALID)
    # The same object (the spare), with nothing of the first answer left in it: not its lazily
    # built `arguments`, not its repairs.
    assert id(second) == kept
    assert second.status == "invalid"
    assert second.arguments == {"limit": 1}
    assert second.repairs == []
    assert second.error
    assert second.arguments_text == INVALID


def test_a_held_result_keeps_its_answer(tools):
    mender = toolmend.Mender(tools)
    held = mender.repair_call("read", REPAIRED)
    arguments = held.arguments
    repairs = held.repairs
    later = [mender.repair_call("read", text) for text in (VALID, INVALID, VALID)]
    for _ in range(3):
        mender.repair_call("read", INVALID)
    assert held.status == "repaired"
    assert held.arguments is arguments
    assert held.arguments == {"path": "b", "limit": 3}
    assert [r.kind for r in held.repairs] == [r.kind for r in repairs]
    assert held.arguments_text == '{"path":"b","limit":3}'
    assert [c.status for c in later] == ["valid", "invalid", "valid"]
    assert len({id(held), *map(id, later)}) == 4


def test_what_was_read_from_a_dropped_result_stays(tools):
    mender = toolmend.Mender(tools)
    arguments = mender.repair_call("read", REPAIRED).arguments
    repairs = mender.repair_call("read", REPAIRED).repairs
    as_dict = mender.repair_call("read", REPAIRED).to_dict()
    for text in (VALID, INVALID, VALID):
        mender.repair_call("read", text)
    assert arguments == {"path": "b", "limit": 3}
    assert [r.kind for r in repairs] == ["field_renamed", "scalar_coerced"]
    assert as_dict["status"] == "repaired" and as_dict["arguments"] == arguments


def test_results_kept_in_a_list_are_all_distinct(tools):
    mender = toolmend.Mender(tools)
    texts = [VALID, REPAIRED, INVALID] * 5
    results = [mender.repair_call("read", t) for t in texts]
    assert len({id(r) for r in results}) == len(texts)
    assert [r.arguments_text for r in results] == [
        mender.repair_call("read", t).arguments_text for t in texts
    ]


def test_only_small_answers_are_kept(tools):
    # A spare keeps its last answer alive until it is refilled: never a large one.
    # (getrefcount counts its own argument: 2 is the name alone, 3 the name and a spare slot.)
    mender = toolmend.Mender(tools)
    small = mender.repair_call("read", VALID)
    big = mender.repair_call("read", '{"path": "' + "x" * 8000 + '"}')
    assert big.status == "valid"
    assert sys.getrefcount(big) == 2
    assert sys.getrefcount(small) == 3
    # Two slots: the next new result takes the free one, the one after replaces the older.
    second = mender.repair_call("read", VALID)
    assert sys.getrefcount(second) == 3 and sys.getrefcount(small) == 3
    third = mender.repair_call("read", INVALID)
    assert sys.getrefcount(third) == 3 and sys.getrefcount(small) == 2
    assert [c.status for c in (small, second, third)] == ["valid", "valid", "invalid"]


def test_a_loop_that_names_its_result_refills_the_one_before(tools):
    # `call = mender.repair_call(...)`: the name still holds the last result when the next call
    # is made, and has let go of the one before it.
    mender = toolmend.Mender(tools)
    first = mender.repair_call("read", VALID)
    kept = id(first)
    call = mender.repair_call("read", REPAIRED)
    del first
    call = mender.repair_call("read", INVALID)
    assert id(call) == kept and sys.getrefcount(call) == 3
    assert (call.status, call.arguments, call.repairs) == ("invalid", {"limit": 1}, [])


def test_a_call_cannot_be_watched_through_a_weak_reference(tools):
    # A weak reference would see a dropped result come back with another answer: `Call` must
    # keep refusing them for the refill to stay invisible.
    call = toolmend.Mender(tools).repair_call("read", VALID)
    with pytest.raises(TypeError):
        weakref.ref(call)
