"""pydantic-ai: `Agent.run` and `Agent.run_stream` over Chat Completions (`OpenAIChatModel`),
`Agent.run` over Responses (`OpenAIResponsesModel`); the strict case's tool is `strict=True`."""

from __future__ import annotations

import asyncio

import pytest
from openai import AsyncOpenAI
from pydantic_ai import Agent, Tool
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.openai import OpenAIProvider

from harness import REQUEST_TIMEOUT_S, ROUTES, case_params, check
from tools import make_tools

FRAMEWORK = "pydantic-ai"
VARIANTS = ["chat", "chat-stream", "responses"]


async def run_agent(root: str, case, variant: str):
    record: list[dict] = []
    client = AsyncOpenAI(base_url=root + "/v1", api_key="sk-mock", max_retries=0,
                         timeout=REQUEST_TIMEOUT_S)
    provider = OpenAIProvider(openai_client=client)
    model_class = OpenAIResponsesModel if variant == "responses" else OpenAIChatModel
    function = make_tools(record)[case.tool["name"]]
    tool = Tool(function, strict=case.name.startswith("strict") or None)
    agent = Agent(model_class(case.name, provider=provider), tools=[tool],
                  instructions="Use the tools.")
    try:
        if variant == "chat-stream":
            async with agent.run_stream("Read it.") as result:
                final = await result.get_output()
        else:
            final = (await agent.run("Read it.")).output
    except Exception as error:  # the run stopping is an outcome the verdict judges
        final = f"{type(error).__name__}: {error}"
    await client.close()
    return final, record


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("case", case_params(FRAMEWORK))
@pytest.mark.parametrize("variant", VARIANTS)
def test_pydantic_ai(server, request, variant, case, route):
    check(request, server, FRAMEWORK, variant, route, case,
          lambda root: asyncio.run(run_agent(root, case, variant)))

