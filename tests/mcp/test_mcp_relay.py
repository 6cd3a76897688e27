"""`toolmend mcp` between the official Python MCP client and real MCP servers.

The client is the `mcp` SDK's stdio client; the servers are `@modelcontextprotocol/server-everything`
from npm and `late_tool_server.py` (built with the same SDK, its tool list changes at run time).
`tap.py` on both sides of the relay records the bytes the client sent and the server received.
"""
import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import HERE

TIMEOUT = 60


def relayed(toolmend_bin, server, tmp_path, *flags):
    """Client → tap → toolmend mcp → tap → server."""
    tap = str(HERE / "tap.py")
    client_log, server_log = tmp_path / "client.log", tmp_path / "server.log"
    args = [tap, str(client_log), "--", toolmend_bin, "mcp", *flags, "--",
            sys.executable, tap, str(server_log), "--", *server]
    return StdioServerParameters(command=sys.executable, args=args), client_log, server_log


def lines(log):
    return [json.loads(line) | {"_raw": line} for line in log.read_bytes().splitlines(keepends=True)]


def calls(log, name):
    return [m for m in lines(log) if m.get("method") == "tools/call" and m["params"]["name"] == name]


def text(result):
    return [c.text for c in result.content if c.type == "text"]


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, TIMEOUT))


def test_everything_server_through_the_relay(toolmend_bin, everything_server, tmp_path):
    params, client_log, server_log = relayed(toolmend_bin, ["node", everything_server, "stdio"], tmp_path)

    async def session():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                tools = await client.list_tools()
                assert "get-sum" in [t.name for t in tools.tools]
                valid = await client.call_tool("get-sum", {"a": 2, "b": 3.50})
                mended = await client.call_tool("get-sum", {"a": "2", "b": 3})
                hopeless = await client.call_tool("get-sum", {"a": 2})
                echo = await client.call_tool("echo", {"message": "hi"})
                return valid, mended, hopeless, echo

    valid, mended, hopeless, echo = run(session())

    # Valid: the server answers, and received the very bytes the client sent.
    assert not valid.is_error and "5.5" in text(valid)[0]
    sent, got = calls(client_log, "get-sum"), calls(server_log, "get-sum")
    assert sent[0]["_raw"] == got[0]["_raw"]

    # Malformed ("2" for a number): mended before the server saw it, with a note for the model.
    assert got[1]["params"]["arguments"] == {"a": 2, "b": 3}
    assert not mended.is_error and "5" in text(mended)[0]
    assert any(t.startswith("Note: `a` was sent with the wrong type") for t in text(mended)), text(mended)

    # Hopeless (b missing): answered by toolmend with the retry message; the server never saw it.
    assert hopeless.is_error
    assert "`/b` is required but missing" in text(hopeless)[0]
    assert len(got) == 2 and len(sent) == 3

    # Everything else passes byte for byte: initialize, notifications, tools/list, other calls.
    assert not echo.is_error and text(echo) == ["Echo: hi"]
    server_raw = [m["_raw"] for m in lines(server_log)]
    for message in lines(client_log):
        if message not in sent[1:]:
            assert message["_raw"] in server_raw, message["_raw"]


def test_tools_list_changed_is_honoured(toolmend_bin, tmp_path):
    server = [sys.executable, str(HERE / "late_tool_server.py")]
    params, _, server_log = relayed(toolmend_bin, server, tmp_path)
    changed = asyncio.Event()

    async def on_message(message):
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            changed.set()

    async def session():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as client:
                await client.initialize()
                await client.list_tools()
                results = {"count": await client.call_tool("count", {"items": "a"})}
                await client.call_tool("enable_late", {})
                await asyncio.wait_for(changed.wait(), TIMEOUT)
                # The list is stale until the client lists again: nothing is mended meanwhile.
                results["stale"] = await client.call_tool("count", {"items": "a"})
                results["late_unlisted"] = await client.call_tool("late", {"items": "a"})
                listed = await client.list_tools()
                assert "late" in [t.name for t in listed.tools]
                results["late"] = await client.call_tool("late", {"items": "a"})
                return results

    results = run(session())
    assert not results["count"].is_error and text(results["count"])[0] == "1 items"
    # The stale and the unlisted calls reached the server as sent, and its own validation failed.
    assert results["stale"].is_error and results["late_unlisted"].is_error
    stale = calls(server_log, "count")[1]
    assert stale["params"]["arguments"] == {"items": "a"}
    # After the fresh list, the new tool's call is mended.
    assert not results["late"].is_error and text(results["late"])[0] == "a"
    assert calls(server_log, "late")[-1]["params"]["arguments"] == {"items": ["a"]}
