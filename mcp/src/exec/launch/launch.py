# toolreg mcp serve: runs one call of a Shinkai Python tool (tool.py).
# argv: the path of tool.py. stdin holds {"params": {...}, "config": {...}};
# `run(CONFIG, INPUTS)` is called with objects of the tool's CONFIG and
# INPUTS classes (their class defaults kept) holding those values, awaited
# when it is a coroutine, and its result written to stdout as JSON, and
# nothing else (the tool's own prints go to stderr).
import asyncio
import importlib.util
import inspect
import json
import sys


def as_object(module, name, values):
    cls = getattr(module, name, None)
    obj = cls() if isinstance(cls, type) else type(name, (), {})()
    for key, value in values.items():
        setattr(obj, key, value)
    return obj


def as_json(value):
    if isinstance(value, dict):
        return {str(k): as_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_json(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "__dict__"):
        return {k: as_json(v) for k, v in vars(value).items() if not k.startswith("_")}
    return str(value)


def main():
    answer = sys.stdout
    sys.stdout = sys.stderr
    data = json.loads(sys.stdin.read() or "{}")
    spec = importlib.util.spec_from_file_location("toolreg_tool", sys.argv[1])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    config = as_object(module, "CONFIG", data.get("config") or {})
    inputs = as_object(module, "INPUTS", data.get("params") or {})

    async def call():
        result = module.run(config, inputs)
        if inspect.isawaitable(result):
            result = await result
        return result

    answer.write(json.dumps(as_json(asyncio.run(call()))))
    answer.flush()


main()
