"""Drive an example server (memo-mcp, system-tools-mcp) with the official MCP Python SDK
through a list of steps, and report what each step returned, as one JSON array on stdout.

The Rust tests tests/tests/examples_memo.rs and examples_system_tools.rs run this with the
venv of scripts/setup-python.sh and assert on the report; this script only observes.

Usage:
  ex6_steps.py --mode auto|legacy --steps JSON -- PROGRAM [ARG...]     (stdio)
  ex6_steps.py --mode auto|legacy --steps JSON --url URL [--token T]   (streamable HTTP)

JSON is an array of steps, run in order on one session:
  ["info"]                     -> {"name", "version", "protocol_version"}
  ["list"]                     -> {"names": [...], "tools": {name: {description, input_schema,
                                   output_schema, annotations}}}
  ["call", NAME, {ARGS}]       -> {"result": {"is_error", "text", "structured"}}
                                  or {"error": {"type", "message", "code"}} for a protocol error
A step that raises is reported as {"error": {...}} and the next step still runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

import client_cli

warnings.simplefilter("ignore")

STEP_DEADLINE_S = 60.0


def error_report(exc: BaseException) -> dict[str, Any]:
    report: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, MCPError):
        report["code"] = exc.code
    return report


def dump(model: Any) -> Any:
    if model is None:
        return None
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def list_tools(client: Client) -> dict[str, Any]:
    tools: dict[str, Any] = {}
    names: list[str] = []
    cursor = None
    for _ in range(100):
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        for tool in page.tools:
            names.append(tool.name)
            tools[tool.name] = {
                "description": tool.description,
                "input_schema": tool.input_schema,
                "output_schema": tool.output_schema,
                "annotations": dump(tool.annotations),
            }
        cursor = page.next_cursor
        if not cursor:
            break
    return {"names": names, "tools": tools}


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        result: types.CallToolResult = await client.call_tool(name, arguments)
    except MCPError as exc:
        return {"error": error_report(exc)}
    texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
    return {
        "result": {
            "is_error": bool(result.is_error),
            "text": "\n".join(texts),
            "structured": result.structured_content,
        }
    }


async def step(client: Client, spec: list[Any]) -> Any:
    kind = spec[0]
    if kind == "info":
        info = client.server_info
        return {
            "name": info.name if info else None,
            "version": info.version if info else None,
            "protocol_version": client.protocol_version,
        }
    if kind == "list":
        return await list_tools(client)
    if kind == "call":
        return await call(client, spec[1], spec[2] if len(spec) > 2 else {})
    raise ValueError(f"unknown step {spec!r}")


async def run(args: argparse.Namespace) -> list[Any]:
    if args.url:
        headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
        http_client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=60.0))
        server: Any = streamable_http_client(args.url, http_client=http_client)
    else:
        server = StdioServerParameters(command=args.stdio[0], args=args.stdio[1:])
    report: list[Any] = []
    async with Client(server, mode=args.mode, read_timeout_seconds=60) as client:
        for spec in args.steps:
            try:
                with anyio.fail_after(STEP_DEADLINE_S):
                    report.append(await step(client, spec))
            except Exception as exc:  # reported, not raised: the Rust test asserts on it
                report.append({"error": error_report(exc)})
    return report


def main() -> int:
    parser = client_cli.parser(__doc__)
    parser.add_argument("--steps", required=True, type=json.loads)
    args = client_cli.parse(parser)
    if not isinstance(args.steps, list) or not all(isinstance(s, list) and s for s in args.steps):
        parser.error("--steps must be a JSON array of non-empty arrays")
    return client_cli.report(run, args)

if __name__ == "__main__":
    sys.exit(main())
