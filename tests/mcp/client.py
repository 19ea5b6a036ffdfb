#!/usr/bin/env python3
"""An MCP client for toolreg's end-to-end tests: the MCP Python SDK's own
ClientSession, over stdio (stdio_client, launching the server command) or
Streamable HTTP (streamable_http_client), negotiating with the classic
`initialize` handshake or the 2026-07-28 `server/discover`.

usage: client.py stdio  initialize|discover -- CMD ARGS...   < plan.json
       client.py http   initialize|discover URL             < plan.json

The plan is {"steps": [...]}, each step one of
  {"op": "list_tools"}                    the tools as sent (raw JSON), each
                                          also read with mcp.types.Tool
  {"op": "call", "name": N, "args": {}}   the CallToolResult
  {"op": "concurrent", "calls": [{"name", "args"}, ...]}
                                          the calls at once, in finish order
  {"op": "list_prompts"} / {"op": "get_prompt", "name": N, "args": {}}
Prints {"protocol": V, "results": [...]} as JSON on stdout; a failed step
gives {"error": message}.
"""

import json
import sys
import time
from typing import Any

import anyio
from pydantic import TypeAdapter

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

RAW = TypeAdapter(dict[str, Any])


def dump(model):
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


async def call(session, name, args):
    started = time.monotonic()
    try:
        result = await session.call_tool(name, args)
        out = dump(result)
    except Exception as e:  # noqa: BLE001 - the test reads the message
        out = {"error": str(e)}
    out["name"] = name
    out["elapsed_ms"] = round((time.monotonic() - started) * 1000)
    return out


async def step(session, s):
    op = s["op"]
    if op == "list_tools":
        raw = await session.send_request(types.ListToolsRequest(), RAW)
        checked = [dump(types.Tool.model_validate(t)) for t in raw["tools"]]
        typed = await session.list_tools()
        return {"tools": raw["tools"], "sdk_tools": checked, "sdk_count": len(typed.tools)}
    if op == "call":
        return await call(session, s["name"], s.get("args", {}))
    if op == "concurrent":
        done = []

        async def one(c):
            done.append(await call(session, c["name"], c.get("args", {})))

        async with anyio.create_task_group() as tg:
            for c in s["calls"]:
                tg.start_soon(one, c)
        return {"finished": done}
    if op == "list_prompts":
        return dump(await session.list_prompts())
    if op == "get_prompt":
        try:
            return dump(await session.get_prompt(s["name"], s.get("args", {})))
        except Exception as e:  # noqa: BLE001
            return {"error": str(e)}
    raise ValueError(f"unknown op {op}")


async def run(session, lifecycle, plan):
    if lifecycle == "discover":
        opened = await session.discover()
    else:
        opened = await session.initialize()
    results = []
    for s in plan["steps"]:
        try:
            results.append(await step(session, s))
        except Exception as e:  # noqa: BLE001
            results.append({"error": f"{type(e).__name__}: {e}"})
    return {
        "protocol": session.protocol_version,
        "capabilities": dump(opened.capabilities),
        "results": results,
    }


async def main():
    transport, lifecycle = sys.argv[1], sys.argv[2]
    plan = json.loads(sys.stdin.read() or '{"steps": []}')
    if transport == "stdio":
        cmd = sys.argv[sys.argv.index("--") + 1 :]
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(__import__("os").environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                out = await run(session, lifecycle, plan)
    else:
        async with streamable_http_client(sys.argv[3]) as (read, write):
            async with ClientSession(read, write) as session:
                out = await run(session, lifecycle, plan)
    print(json.dumps(out))


anyio.run(main)
