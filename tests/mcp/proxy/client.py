#!/usr/bin/env python3
"""The agent side of `toolreg mcp proxy` tests: the MCP Python SDK's
ClientSession over stdio, launching the command after `--`, running the
plan read from stdin: {"steps": [...]}, each one of
  {"op": "list"}                          the listed tool names
  {"op": "call", "name": N, "args": {}}   {"text": ...} or {"error": ...}
  {"op": "wait_changed"}                  waits for tools/list_changed
  {"op": "progress", "name": N}           the call's progress values
  {"op": "cancel", "name": N, "after": S} cancels the call after S seconds
Prints {"results": [...]} on stdout.
"""

import json
import os
import sys

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

CHANGED = {"seen": False}


async def on_message(message):
    if getattr(message, "method", None) == "notifications/tools/list_changed":
        CHANGED["seen"] = True


async def call(session, name, args, **kw):
    try:
        r = await session.call_tool(name, args, **kw)
        text = "".join(c.text for c in r.content if getattr(c, "text", None) is not None)
        return {"text": text, "is_error": bool(r.is_error)}
    except Exception as e:  # noqa: BLE001 - the test reads the message
        return {"error": str(e)}


async def step(session, s):
    op = s["op"]
    if op == "list":
        return {"names": sorted(t.name for t in (await session.list_tools()).tools)}
    if op == "call":
        return await call(session, s["name"], s.get("args", {}))
    if op == "wait_changed":
        with anyio.fail_after(10):
            while not CHANGED["seen"]:
                await anyio.sleep(0.02)
        return {"changed": True}
    if op == "progress":
        seen = []

        async def progress(p, total, message):
            seen.append([p, total, message])

        out = await call(session, s["name"], s.get("args", {}), progress_callback=progress)
        out["progress"] = seen
        return out
    if op == "cancel":
        with anyio.move_on_after(s["after"]) as scope:
            await call(session, s["name"], s.get("args", {}))
        await anyio.sleep(0.5)
        return {"cancelled": scope.cancelled_caught}
    raise ValueError(f"unknown op {op}")


async def main():
    plan = json.loads(sys.stdin.read())
    cmd = sys.argv[sys.argv.index("--") + 1 :]
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ))
    results = []
    try:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                await session.initialize()
                for s in plan["steps"]:
                    try:
                        results.append(await step(session, s))
                    except Exception as e:  # noqa: BLE001
                        results.append({"error": f"{type(e).__name__}: {e}"})
    except Exception as e:  # noqa: BLE001 - a session that ends under the client
        results.append({"session_error": f"{type(e).__name__}: {e}"})
    print(json.dumps({"results": results}))


anyio.run(main)
