#!/usr/bin/env python3
"""A hand-written stdio MCP server (no SDK) for the `toolreg mcp proxy`
tests that need exact messages: it answers `initialize` with the
protocol version asked for, lists RAW_TOOLS tools (`t0`, `t1`, …; 1 when
unset), answers `tools/call` with the request id it received (as JSON
text) after a progress notification when the call has a progress token,
and on `ping` misbehaves as RAW_MODE says: `garbage` (a line that is not
JSON, then the answer), `huge` (a 17 MiB line).
"""

import json
import os
import sys

N = int(os.environ.get("RAW_TOOLS", "1"))
MODE = os.environ.get("RAW_MODE", "")


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "raw", "version": "1.0.0"}}})
    elif method == "tools/list":
        tools = [{"name": f"t{i}", "description": f"Tool number {i}.",
                  "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}
                 for i in range(N)]
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools}})
    elif method == "tools/call":
        token = (msg["params"].get("_meta") or {}).get("progressToken")
        if token is not None:
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": 1, "total": 2}})
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "content": [{"type": "text", "text": json.dumps(mid)}]}})
    elif method == "ping":
        if MODE == "garbage":
            sys.stdout.write("{this is not json\n")
            sys.stdout.flush()
        if MODE == "huge":
            sys.stdout.write('{"jsonrpc":"2.0","method":"x","params":"' + "a" * (17 << 20) + '"}\n')
            sys.stdout.flush()
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
    elif mid is not None and method is not None:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": method}})
