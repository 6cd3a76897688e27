"""What each framework adapter adds per model call, as a share of the framework's own overhead.

    python bench/python/bench_integrations.py [--seconds S] [langchain|pydantic-ai|openai-agents|litellm ...]

For LangChain (``create_agent``), pydantic-ai (``Agent`` on ``FunctionModel``) and the OpenAI
Agents SDK (``Runner.run`` on a scripted ``Model``), an agent run is one model call that returns
a valid tool call, the tool, and a second model call that answers: the models cost nothing, so
the time per model call is the framework's own overhead. The same run is timed without the
adapter and with it, in alternating rounds; the table gives the median time per model call of
each, the difference, and the adapter's own hook timed alone on the same response (the
difference between two runs of a few hundred µs is noisy; the hook alone is not). For LiteLLM the
reference is ``litellm.acompletion`` against a loopback mock upstream, and the adapter's cost is
its pre-call and post-call hooks on that request and response.

Valid calls, on purpose: they are the common case and the adapter's whole cost there is the
check (a repaired call costs the repair, which saves a model round trip). Goal: the adapter under
5% of the framework's own per-call overhead. Needs the packages of
crates/toolmend-py/tests-integrations/requirements.txt and the toolmend wheel.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "crates" / "toolmend-py" / "tests-integrations"))

logging.disable(logging.WARNING)

VALID = '{"path": "notes.txt", "limit": 10}'


def per_call(run: Callable[[], int], seconds: float) -> float:
    """Seconds per model call of ``run`` (which returns its model calls), over ~``seconds``."""
    calls = 0
    start = time.perf_counter()
    while True:
        calls += run()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return elapsed / calls


def hook_time(hook: Callable[[], Any], seconds: float) -> float:
    n = 0
    start = time.perf_counter()
    while True:
        for _ in range(50):
            hook()
        n += 50
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return elapsed / n


# ---- LangChain ------------------------------------------------------------------------------


def langchain_case() -> Tuple[Callable[[bool], Callable[[], int]], Callable[[], Any]]:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    from toolmend.integrations.langchain import ToolmendMiddleware

    @tool
    def read_file(path: str, limit: int = 100) -> str:
        """Read a text file."""
        return path

    class Model(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> "Model":
            return self

    def script():
        return iter([AIMessage(content="", tool_calls=[
            {"name": "read_file", "args": json.loads(VALID), "id": "c1", "type": "tool_call"}]),
            AIMessage(content="done")])

    def make(with_toolmend: bool) -> Callable[[], int]:
        middleware = [ToolmendMiddleware()] if with_toolmend else []
        model = Model(messages=script())
        agent = create_agent(model=model, tools=[read_file], middleware=middleware)

        def run() -> int:
            model.messages = script()
            agent.invoke({"messages": [{"role": "user", "content": "read"}]})
            return 2
        return run

    from langchain.agents.middleware import ModelResponse

    middleware = ToolmendMiddleware([read_file])
    response = ModelResponse(result=[AIMessage(content="", id="m1", tool_calls=[
        {"name": "read_file", "args": json.loads(VALID), "id": "c1", "type": "tool_call"}])])

    def hook():
        mender, toolset = middleware._mender(None)
        middleware._mend(None, response, mender, toolset)
    return make, hook


# ---- pydantic-ai ----------------------------------------------------------------------------


def pydantic_ai_case():
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    from toolmend.integrations.pydantic_ai import ToolmendModel

    def respond(messages, info):
        last = messages[-1]
        if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("read_file", VALID, tool_call_id="c1")])

    def make(with_toolmend: bool) -> Callable[[], int]:
        model = FunctionModel(respond)
        agent = Agent(ToolmendModel(model) if with_toolmend else model)

        @agent.tool_plain
        def read_file(path: str, limit: int = 100) -> str:
            """Read a text file."""
            return path

        def run() -> int:
            agent.run_sync("read")
            return 2
        return run

    # The hook alone: the request parameters of a real run, captured once.
    captured: Dict[str, Any] = {}

    def capture(messages, info):
        captured["params"] = info.model_request_parameters
        return respond(messages, info)

    agent = Agent(FunctionModel(capture))

    @agent.tool_plain
    def read_file(path: str, limit: int = 100) -> str:
        """Read a text file."""
        return path

    agent.run_sync("read")
    wrapper = ToolmendModel(FunctionModel(respond))
    response = ModelResponse(parts=[ToolCallPart("read_file", VALID, tool_call_id="c1")])
    history = [ModelRequest.user_text_prompt("read")]
    params = captured["params"]

    def hook():
        wrapper._mend_history(history, params)
        wrapper._mend_response(response, params)
    return make, hook


# ---- OpenAI Agents SDK ----------------------------------------------------------------------


def openai_agents_case():
    from agents import Agent, Runner, function_tool
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from toolmend.integrations.openai_agents import ToolmendModel, _Mending

    call = ResponseFunctionToolCall(type="function_call", id="fc_1", call_id="c1", name="read_file",
                                    arguments=VALID, status="completed")
    answer = ResponseOutputMessage(id="m1", type="message", role="assistant", status="completed",
                                   content=[ResponseOutputText(type="output_text", text="done",
                                                               annotations=[])])

    class Scripted(Model):
        async def get_response(self, system_instructions, input, model_settings, tools,
                               output_schema, handoffs, tracing, **kwargs):
            answered = not isinstance(input, str) and any(
                isinstance(i, dict) and i.get("type") == "function_call_output" for i in input)
            return ModelResponse(output=[answer if answered else call], usage=Usage(), response_id=None)

        async def stream_response(self, *args, **kwargs):
            raise NotImplementedError
            yield

    @function_tool
    def read_file(path: str, limit: int = 100) -> str:
        """Read a text file."""
        return path

    from agents import set_tracing_disabled
    set_tracing_disabled(True)

    def make(with_toolmend: bool) -> Callable[[], int]:
        model = ToolmendModel(Scripted()) if with_toolmend else Scripted()
        agent = Agent(name="reader", tools=[read_file], model=model)
        loop = asyncio.new_event_loop()

        def run() -> int:
            loop.run_until_complete(Runner.run(agent, "read"))
            return 2
        return run

    wrapper = ToolmendModel(Scripted())
    tools = [read_file]
    history = [{"role": "user", "content": "read"}]

    def hook():
        mender, toolset = wrapper._tools(tools, [])
        wrapper._mend_input(history, mender)
        _Mending(mender, toolset, True).output([call])
    return make, hook


# ---- LiteLLM --------------------------------------------------------------------------------


def litellm_case():
    import litellm
    from mock_openai import MockOpenAI

    from toolmend.integrations import litellm as tm_litellm

    mock = MockOpenAI().start()
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {
        "type": "object", "required": ["path"],
        "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}}}]
    messages = [{"role": "user", "content": "read"}]
    loop = asyncio.new_event_loop()
    guardrail = tm_litellm.ToolmendGuardrail(guardrail_name="toolmend", event_hook=["pre_call", "post_call"])

    def make(with_toolmend: bool) -> Callable[[], int]:
        async def one():
            data = {"model": "openai/valid", "messages": list(messages), "tools": tools}
            if with_toolmend:
                await guardrail.async_pre_call_hook(None, None, data, "completion")
            response = await litellm.acompletion(api_base=mock.url, api_key="sk-mock", **data)
            if with_toolmend:
                await guardrail.async_post_call_success_hook(data, None, response)

        def run() -> int:
            loop.run_until_complete(one())
            return 1
        return run

    response = loop.run_until_complete(litellm.acompletion(
        model="openai/valid", messages=messages, tools=tools, api_base=mock.url, api_key="sk-mock"))

    def hook():
        data = {"messages": list(messages), "tools": tools}
        loop.run_until_complete(guardrail.async_pre_call_hook(None, None, data, "completion"))
        loop.run_until_complete(guardrail.async_post_call_success_hook(data, None, response))
    return make, hook


CASES = {
    "langchain": langchain_case,
    "pydantic-ai": pydantic_ai_case,
    "openai-agents": openai_agents_case,
    "litellm": litellm_case,
}


def paired(plain: Callable[[], int], mended: Callable[[], int], seconds: float
           ) -> Tuple[float, float, float]:
    """Per model call: the median time without the adapter, with it, and the median of the
    paired differences. The runs alternate one by one (the order flipping each pair), so load
    from elsewhere on the machine falls on both alike."""
    without: List[float] = []
    with_: List[float] = []
    diffs: List[float] = []
    deadline = time.perf_counter() + seconds
    flip = False
    while time.perf_counter() < deadline or len(diffs) < 20:
        times = {}
        for name, run in ((("b", mended), ("a", plain)) if flip else (("a", plain), ("b", mended))):
            t = time.perf_counter()
            calls = run()
            times[name] = (time.perf_counter() - t) / calls
        flip = not flip
        without.append(times["a"])
        with_.append(times["b"])
        diffs.append(times["b"] - times["a"])
    return statistics.median(without), statistics.median(with_), statistics.median(diffs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="per framework, paired runs")
    parser.add_argument("cases", nargs="*", default=list(CASES))
    args = parser.parse_args()
    print("| framework | own overhead / model call | with adapter | paired difference | "
          "adapter hook alone | hook / overhead |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in args.cases:
        make, hook = CASES[name]()
        plain, mended = make(False), make(True)
        plain(); mended(); hook()  # warm up: imports, caches, the Mender of the tool set
        base, total, diff = paired(plain, mended, args.seconds)
        alone = statistics.median(hook_time(hook, 0.2) for _ in range(5))
        print(f"| {name} | {base * 1e6:.0f} µs | {total * 1e6:.0f} µs | "
              f"{diff * 1e6:+.0f} µs ({diff / base * 100:+.1f}%) | {alone * 1e6:.1f} µs | "
              f"{alone / base * 100:.2f}% |", flush=True)


if __name__ == "__main__":
    main()
