"""The OpenAI Agents SDK (`openai-agents`): `Runner.run` and `Runner.run_streamed` with default
(strict) function tools, over Chat Completions and over Responses."""

from __future__ import annotations

import asyncio

import pytest
from agents import (Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner,
                    function_tool, set_tracing_disabled)
from openai import AsyncOpenAI

from harness import REQUEST_TIMEOUT_S, ROUTES, case_params, check
from tools import make_tools

set_tracing_disabled(True)
FRAMEWORK = "openai-agents"
VARIANTS = ["chat", "chat-stream", "responses", "responses-stream"]
MAX_TURNS = 6


async def run_agent(root: str, case, variant: str):
    record: list[dict] = []
    client = AsyncOpenAI(base_url=root + "/v1", api_key="sk-mock", max_retries=0,
                         timeout=REQUEST_TIMEOUT_S)
    model_class = OpenAIChatCompletionsModel if variant.startswith("chat") else OpenAIResponsesModel
    agent = Agent(name="reader", instructions="Use the tools.",
                  model=model_class(model=case.name, openai_client=client),
                  tools=[function_tool(make_tools(record)[case.tool["name"]])])
    try:
        if variant.endswith("-stream"):
            result = Runner.run_streamed(agent, "Read it.", max_turns=MAX_TURNS)
            async for _ in result.stream_events():
                pass
        else:
            result = await Runner.run(agent, "Read it.", max_turns=MAX_TURNS)
        final = result.final_output
    except Exception as error:  # the run stopping is an outcome the verdict judges
        final = f"{type(error).__name__}: {error}"
    await client.close()
    return final, record


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("case", case_params(FRAMEWORK))
@pytest.mark.parametrize("variant", VARIANTS)
def test_openai_agents(server, request, variant, case, route):
    check(request, server, FRAMEWORK, variant, route, case,
          lambda root: asyncio.run(run_agent(root, case, variant)))

