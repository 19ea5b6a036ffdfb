#!/usr/bin/env python3
"""Check toolreg's exports with the client SDKs' own types.

Reads the exports written by `TOOLREG_EXPORT_DIR=DIR cargo test -p toolreg-core
--test export_targets` (DIR/<target>/<tool>.json) and validates each one:

  mcp-<version>       mcp.types.Tool, the SDK's wire model for that protocol
                      version where it has one, and mcp.types.ListToolsResult
  openai, openai-strict
                      openai ChatCompletionFunctionToolParam and FunctionDefinition
  anthropic           anthropic ToolParam (pydantic TypeAdapter)
  gemini, gemini-json-schema
                      google.genai types.FunctionDeclaration

TypedDict checks also refuse keys the type doesn't have. Exits 1 on any
rejection, naming the target, the tool and the SDK's error.
"""

import importlib
import json
import re
import sys
from pathlib import Path

from pydantic import TypeAdapter

import mcp.types as mcp_types
from anthropic.types import ToolParam
from anthropic.types.tool_param import InputSchemaTyped
from google.genai import types as genai_types
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.shared import FunctionDefinition
from openai.types.shared_params import FunctionDefinition as FunctionDefinitionParam

NAME_64 = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def closed(typed_dict, doc, where="the document"):
    """Validate with the TypedDict's TypeAdapter and refuse unknown keys."""
    TypeAdapter(typed_dict).validate_python(doc)
    known = set(typed_dict.__required_keys__) | set(typed_dict.__optional_keys__)
    extra = sorted(set(doc) - known)
    if extra:
        raise ValueError(f"{where} has keys {typed_dict.__name__} lacks: {extra}")


def wire_model(version):
    """The MCP SDK's generated wire model of Tool for one protocol version, if any."""
    try:
        module = importlib.import_module("mcp_types._v" + version.replace("-", "_"))
    except ImportError:
        return None
    return getattr(module, "Tool", None)


def check_mcp(version):
    wire = wire_model(version)
    # 2025-06-18 has the 2025-11-25 Tool's fields minus icons/execution.
    if wire is None and version == "2025-06-18":
        wire = wire_model("2025-11-25")

    def check(doc):
        mcp_types.Tool.model_validate(doc)
        if wire is not None:
            wire.model_validate(doc)
        if version < "2026-07-28" and "outputSchema" in doc:
            if doc["outputSchema"].get("type") != "object":
                raise ValueError(f"protocol {version} needs outputSchema type object")
        if version < "2025-11-25" and "icons" in doc:
            raise ValueError(f"protocol {version} has no icons")

    return check, wire


def check_openai(strict):
    def check(doc):
        closed(ChatCompletionFunctionToolParam, doc)
        closed(FunctionDefinitionParam, doc["function"], "function")
        FunctionDefinition.model_validate(doc["function"])
        if not NAME_64.match(doc["function"]["name"]):
            raise ValueError(f"function name {doc['function']['name']!r}")
        if strict and doc["function"].get("strict") is not True:
            raise ValueError("strict export without strict: true")

    return check


def check_anthropic(doc):
    closed(ToolParam, doc)
    TypeAdapter(InputSchemaTyped).validate_python(doc["input_schema"])
    if not NAME_64.match(doc["name"]):
        raise ValueError(f"tool name {doc['name']!r}")
    top = [k for k in ("oneOf", "anyOf", "allOf") if k in doc["input_schema"]]
    if top:
        raise ValueError(f"input_schema has {top} at the top level, which the API refuses")


def check_gemini(doc):
    genai_types.FunctionDeclaration.model_validate(doc)


def must_refuse(what, fn, doc):
    """The checks must be able to fail: a known-bad document is refused."""
    try:
        fn(doc)
    except Exception:
        return None
    return f"self-test: {what} was accepted but must be refused"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check.py EXPORT_DIR")
    root = Path(sys.argv[1])
    failures = []
    counts = {}

    targets = []
    for version in ("2025-06-18", "2025-11-25", "2026-07-28"):
        fn, wire = check_mcp(version)
        targets.append((f"mcp-{version}", fn))
        print(f"mcp-{version}: mcp.types.Tool" + (f" + {wire.__module__}.Tool" if wire else ""))
    targets += [
        ("openai", check_openai(False)),
        ("openai-strict", check_openai(True)),
        ("anthropic", check_anthropic),
        ("gemini", check_gemini),
        ("gemini-json-schema", check_gemini),
    ]
    for target, fn in targets:
        files = sorted((root / target).glob("*.json"))
        if not files:
            failures.append(f"{target}: no exports in {root / target}")
        docs = []
        for f in files:
            doc = json.loads(f.read_text())
            docs.append(doc)
            try:
                fn(doc)
            except Exception as e:  # the SDK's own error, printed as is
                failures.append(f"{target}/{f.stem}: {e}")
        if target.startswith("mcp-") and docs:
            try:
                mcp_types.ListToolsResult.model_validate({"tools": docs})
            except Exception as e:
                failures.append(f"{target}: ListToolsResult: {e}")
        counts[target] = len(files)

    for problem in [
        must_refuse("a Gemini Schema with exclusiveMinimum", check_gemini,
                    {"name": "x", "parameters": {"type": "object",
                                                 "properties": {"a": {"type": "number", "exclusiveMinimum": 1}}}}),
        must_refuse("a 2025-11-25 tool with an array outputSchema", check_mcp("2025-11-25")[0],
                    {"name": "x", "inputSchema": {"type": "object"}, "outputSchema": {"type": "array"}}),
        must_refuse("an Anthropic tool with an array input_schema", check_anthropic,
                    {"name": "x", "input_schema": {"type": "array"}}),
        must_refuse("an OpenAI tool with an unknown key", check_openai(False),
                    {"type": "function", "function": {"name": "x", "parameters": {}, "bogus": 1}}),
    ]:
        if problem:
            failures.append(problem)

    print("checked: " + ", ".join(f"{t} {n}" for t, n in counts.items()))
    for f in failures:
        print(f"REJECTED {f}", file=sys.stderr)
    if failures:
        sys.exit(f"{len(failures)} export(s) rejected by the SDKs' types")
    print("python SDKs: every export accepted")


if __name__ == "__main__":
    main()
