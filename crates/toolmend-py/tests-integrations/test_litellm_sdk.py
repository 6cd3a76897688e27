"""LiteLLM in process: ``ToolmendCallback`` on ``litellm.acompletion`` and ``repair_completion``
on ``litellm.completion``, against the scripted upstream on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch from outside

import litellm  # noqa: E402

from conftest import ALIASED, REPAIRED  # noqa: E402
from mock_openai import VALID, MockOpenAI  # noqa: E402
from test_litellm_proxy import READ_FILE, USER  # noqa: E402
from toolmend.integrations.litellm import ToolmendCallback, repair_completion  # noqa: E402


@pytest.fixture(scope="module")
def upstream():
    mock = MockOpenAI().start()
    yield mock
    mock.stop()


@pytest.fixture
def callback():
    saved = list(litellm.callbacks)
    litellm.callbacks = [ToolmendCallback()]
    yield
    litellm.callbacks = saved


def acompletion(upstream, model: str):
    return asyncio.run(litellm.acompletion(
        model=f"openai/{model}", messages=USER, tools=[READ_FILE], api_base=upstream.url,
        api_key="sk-mock"))


def test_callback_repairs_acompletion_before_it_returns(upstream, callback):
    response = acompletion(upstream, "aliased")
    [call] = response.choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == REPAIRED and call.id == "call_1"


def test_without_the_callback_the_call_stays_broken(upstream):
    response = acompletion(upstream, "aliased")
    assert response.choices[0].message.tool_calls[0].function.arguments == ALIASED


def test_callback_keeps_a_valid_call_byte_identical(upstream, callback):
    response = acompletion(upstream, "valid")
    assert response.choices[0].message.tool_calls[0].function.arguments == VALID


def test_repair_completion_on_a_synchronous_completion(upstream):
    response = litellm.completion(model="openai/aliased", messages=USER, tools=[READ_FILE],
                                  api_base=upstream.url, api_key="sk-mock")
    [call] = repair_completion(response, [READ_FILE])
    assert call.status == "repaired"
    assert json.loads(response.choices[0].message.tool_calls[0].function.arguments) == REPAIRED
