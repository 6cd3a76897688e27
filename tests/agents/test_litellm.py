"""The LiteLLM SDK: `litellm.completion` in the usual hand-written tool loop (run each call,
send an error back as the tool result when its arguments do not fit), streamed (chunks put
together with `stream_chunk_builder`) and not, against Chat Completions (`openai/` models)
and Anthropic Messages (`anthropic/` models); tools as JSON Schema, as cases.py declares them."""

from __future__ import annotations

import json
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch of the price list

import litellm  # noqa: E402
import pytest  # noqa: E402

from harness import REQUEST_TIMEOUT_S, ROUTES, case_params, check  # noqa: E402
from tools import make_tools  # noqa: E402

litellm.suppress_debug_info = True  # no "Provider List" banner on every exception

FRAMEWORK = "litellm"
VARIANTS = ["chat", "chat-stream", "anthropic", "anthropic-stream"]
MAX_TURNS = 6


def run_agent(root: str, case, variant: str):
    record: list[dict] = []
    functions = make_tools(record)
    stream = variant.endswith("-stream")
    if variant.startswith("anthropic"):
        target = {"model": f"anthropic/{case.name}", "api_base": root, "max_tokens": 512}
    else:
        target = {"model": f"openai/{case.name}", "api_base": root + "/v1"}
    tools = [{"type": "function", "function": case.tool}]
    messages: list[dict] = [{"role": "user", "content": "Read it."}]
    try:
        for _ in range(MAX_TURNS):
            offered = None if case.tools_first_turn_only and len(messages) > 1 else tools
            response = litellm.completion(messages=messages, tools=offered, stream=stream,
                                          api_key="sk-mock", num_retries=0,
                                          timeout=REQUEST_TIMEOUT_S, **target)
            if stream:
                response = litellm.stream_chunk_builder(list(response), messages=messages)
            message = response.choices[0].message
            if not message.tool_calls:
                return message.content, record
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                try:
                    output = functions[call.function.name](**json.loads(call.function.arguments))
                except Exception as error:
                    output = f"error: {type(error).__name__}: {error}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
        return "the loop ran out of turns", record
    except Exception as error:  # the run stopping is an outcome the verdict judges
        return f"{type(error).__name__}: {error}", record


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("case", case_params(FRAMEWORK))
@pytest.mark.parametrize("variant", VARIANTS)
def test_litellm(server, request, variant, case, route):
    check(request, server, FRAMEWORK, variant, route, case,
          lambda root: run_agent(root, case, variant))
