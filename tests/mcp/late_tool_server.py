"""An MCP server built with the official Python SDK whose tool list changes at run time.

Tools: `count(items: list[str])` (read-only) and `enable_late()`, which adds
`late(items: list[str])` and sends `notifications/tools/list_changed`. The SDK validates
arguments itself, so a call the relay did not mend fails here."""
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("late-tool")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def count(items: list[str]) -> str:
    """Count the items."""
    return f"{len(items)} items"


def late(items: list[str]) -> str:
    """Join the items."""
    return "+".join(items)


@server.tool()
async def enable_late(ctx: Context) -> str:
    """Add the `late` tool."""
    server.add_tool(late)
    await ctx.session.send_tool_list_changed()
    return "late enabled"


if __name__ == "__main__":
    server.run("stdio")
