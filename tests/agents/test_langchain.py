"""LangChain v1: `create_agent` with `ChatOpenAI` (Chat Completions), `invoke` and, with
`streaming=True`, `stream`; tools from typed functions (`StructuredTool`)."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI

from harness import REQUEST_TIMEOUT_S, ROUTES, case_params, check
from tools import make_tools

FRAMEWORK = "langchain"
VARIANTS = ["chat", "chat-stream"]
RECURSION_LIMIT = 12


def run_agent(root: str, case, variant: str):
    record: list[dict] = []
    streaming = variant == "chat-stream"
    model = ChatOpenAI(model=case.name, base_url=root + "/v1", api_key="sk-mock",
                       max_retries=0, streaming=streaming, timeout=REQUEST_TIMEOUT_S)
    tool = StructuredTool.from_function(make_tools(record)[case.tool["name"]])
    agent = create_agent(model, tools=[tool], system_prompt="Use the tools.")
    inputs = {"messages": [{"role": "user", "content": "Read it."}]}
    config = {"recursion_limit": RECURSION_LIMIT}
    try:
        if streaming:
            state = None
            for state in agent.stream(inputs, config, stream_mode="values"):
                pass
        else:
            state = agent.invoke(inputs, config)
        final = state["messages"][-1].content
    except Exception as error:  # the run stopping is an outcome the verdict judges
        final = f"{type(error).__name__}: {error}"
    return final, record


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("case", case_params(FRAMEWORK))
@pytest.mark.parametrize("variant", VARIANTS)
def test_langchain(server, request, variant, case, route):
    check(request, server, FRAMEWORK, variant, route, case,
          lambda root: run_agent(root, case, variant))
