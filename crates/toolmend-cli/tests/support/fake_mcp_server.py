"""A tiny stdio MCP server for `tests/mcp.rs`: it answers with what it received, byte for byte.

Usage: fake_mcp_server.py MODE. Every mode answers `tools/list` with one tool (`read_many`) and
any other request with `{"received": <the request line as it came>, "count": <lines so far>}`
in an MCP tool result. Modes add a fault:
  plain      nothing more
  garbage    writes a line that is not JSON before each answer
  big        answers a request over 1000 bytes with a result over 100 KB on one line
  exit3      exits with code 3 after the first request line
"""
import json
import sys

TOOLS = {"tools": [{"name": "read_many", "inputSchema": {
    "type": "object", "required": ["paths"],
    "properties": {"paths": {"type": "array", "items": {"type": "string"}}}}}]}


def main():
    mode = sys.argv[1]
    count = 0
    for raw in sys.stdin.buffer:
        count += 1
        if mode == "exit3":
            sys.exit(3)
        message = json.loads(raw)
        if "id" not in message or "method" not in message:
            continue
        if mode == "garbage":
            sys.stdout.buffer.write(b"this is not JSON {\n")
        if message["method"] == "tools/list":
            result = TOOLS
        else:
            text = raw.decode("utf-8")
            if mode == "big" and len(raw) > 1000:
                text = "x" * 200_000
            result = {"content": [{"type": "text", "text": text}], "count": count}
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        sys.stdout.buffer.write(json.dumps(answer).encode() + b"\n")
        sys.stdout.buffer.flush()


main()
