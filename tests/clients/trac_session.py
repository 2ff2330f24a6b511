"""Drive the trac-mcp example server with the official MCP Python SDK over stdio and report
what happened, as one JSON object on stdout (step name -> observations).

tests/tests/examples_trac.rs runs this with the venv of scripts/setup-python.sh against a
trac-mcp process talking to a real tracd, and asserts on the report; this script only
observes.

Usage:
  trac_session.py [--mode auto|legacy] --tag TAG STEP... -- PROGRAM [ARG...]

Steps:
  list       every tool name (all pages), with the schemas and hints the test checks
  calls      ping, then a ticket's life (create, get, search, update, changelog) and a wiki
             page's (create, get as markdown), as a model would call them
  errors     a missing ticket, bad arguments
  hidden     calls to write tools (answered as unknown when the permissions file hides them)
             and one read tool
  resources  the wiki resource template; a page made with wiki_create, WikiStart and a
             missing page read through it
TAG makes the names of created tickets and pages unique.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Any, Awaitable, Callable

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

warnings.simplefilter("ignore")

STEP_DEADLINE_S = 60.0


def error_report(exc: BaseException) -> dict[str, Any]:
    report: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, MCPError):
        report["code"] = exc.code
    return report


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tools/call, reported as a result or as a protocol error."""
    try:
        result = await client.call_tool(name, arguments)
    except MCPError as exc:
        return {"protocol_error": error_report(exc)}
    texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
    return {
        "is_error": bool(result.is_error),
        "text": "\n".join(texts),
        "structured": result.structured_content,
    }


async def step_list(client: Client, tag: str) -> dict[str, Any]:
    tools: list[Any] = []
    cursor = None
    for _ in range(100):
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    by_name = {tool.name: tool for tool in tools}

    def hints(name: str) -> dict[str, Any] | None:
        tool = by_name.get(name)
        if tool is None or tool.annotations is None:
            return None
        a = tool.annotations
        return {
            "read_only": a.read_only_hint,
            "destructive": a.destructive_hint,
            "idempotent": a.idempotent_hint,
        }

    return {
        "names": [tool.name for tool in tools],
        "ticket_search_input": by_name["ticket_search"].input_schema if "ticket_search" in by_name else None,
        "ticket_get_output": by_name["ticket_get"].output_schema if "ticket_get" in by_name else None,
        "batch_delete_input": (
            by_name["ticket_batch_delete"].input_schema if "ticket_batch_delete" in by_name else None
        ),
        "hints": {name: hints(name) for name in ("ticket_get", "ticket_delete", "ticket_create")},
    }


async def step_calls(client: Client, tag: str) -> dict[str, Any]:
    out: dict[str, Any] = {"ping": await call(client, "ping", {})}
    created = await call(
        client,
        "ticket_create",
        {"summary": f"From Python {tag}", "description": "Made by the MCP SDK.", "keywords": tag},
    )
    out["create"] = created
    ticket_id = (created.get("structured") or {}).get("id")
    if ticket_id is None:
        return out
    out["get"] = await call(client, "ticket_get", {"id": ticket_id})
    out["search"] = await call(client, "ticket_search", {"query": f"keywords~={tag}"})
    out["update"] = await call(
        client, "ticket_update", {"id": ticket_id, "comment": "Seen from Python.", "fields": {"priority": "minor"}}
    )
    out["changelog"] = await call(client, "ticket_changelog", {"id": ticket_id})
    page = f"PySdk{tag}"
    out["wiki_create"] = await call(
        client, "wiki_create", {"name": page, "content": "# From Python\n\nSome *emphasis*.\n"}
    )
    out["wiki_get"] = await call(client, "wiki_get", {"name": page})
    out["wiki_get_markdown"] = await call(client, "wiki_get", {"name": page, "format": "markdown"})
    return out


async def step_errors(client: Client, tag: str) -> dict[str, Any]:
    return {
        "missing_ticket": await call(client, "ticket_get", {"id": 987654}),
        "wrong_type": await call(client, "ticket_get", {"id": "seven"}),
        "over_limit": await call(client, "ticket_search", {"max_results": 1000}),
    }


async def step_hidden(client: Client, tag: str) -> dict[str, Any]:
    return {
        "ticket_create": await call(client, "ticket_create", {"summary": f"must not exist {tag}", "keywords": tag}),
        "ticket_delete": await call(client, "ticket_delete", {"id": 1}),
        "wiki_file_push": await call(client, "wiki_file_push", {"path": "/dev/null", "page": "X"}),
        "no_such_tool": await call(client, "no_such_tool", {}),
        "ticket_search": await call(client, "ticket_search", {"query": f"keywords~={tag}"}),
    }


async def step_resources(client: Client, tag: str) -> dict[str, Any]:
    templates = await client.list_resource_templates(cache_mode="bypass")
    out: dict[str, Any] = {
        "templates": [
            {"uri_template": t.uri_template, "name": t.name, "mime_type": t.mime_type}
            for t in templates.resource_templates
        ]
    }
    page = f"PyRes{tag}"
    out["create"] = await call(client, "wiki_create", {"name": page, "content": "= Resource =\n\nRead me.\n"})
    for key, uri in (
        ("read", f"trac://wiki/{page}"),
        ("wiki_start", "trac://wiki/WikiStart"),
        ("missing", f"trac://wiki/NoSuch{tag}"),
    ):
        try:
            result = await client.read_resource(uri)
            out[key] = {
                "contents": [
                    {"uri": str(c.uri), "mime_type": c.mime_type, "text": getattr(c, "text", None)}
                    for c in result.contents
                ]
            }
        except MCPError as exc:
            out[key] = {"protocol_error": error_report(exc)}
    return out


STEPS: dict[str, Callable[[Client, str], Awaitable[dict[str, Any]]]] = {
    "list": step_list,
    "calls": step_calls,
    "errors": step_errors,
    "hidden": step_hidden,
    "resources": step_resources,
}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    server = StdioServerParameters(command=args.server[0], args=args.server[1:])
    report: dict[str, Any] = {}
    async with Client(server, mode=args.mode, read_timeout_seconds=60) as client:
        info = client.server_info
        report["server"] = {"name": info.name if info else None, "protocol": client.protocol_version}
        for name in args.steps:
            try:
                with anyio.fail_after(STEP_DEADLINE_S):
                    report[name] = await STEPS[name](client, args.tag)
            except Exception as exc:  # reported, not raised: the Rust test asserts on it
                report[name] = {"error": error_report(exc)}
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["auto", "legacy"], default="auto")
    parser.add_argument("--tag", required=True)
    parser.add_argument("steps", nargs="+", choices=sorted(STEPS), metavar="STEP")
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        parser.error("give the server command after --")
    cut = argv.index("--")
    args = parser.parse_args(argv[:cut])
    args.server = argv[cut + 1 :]
    report = anyio.run(run, args)
    json.dump(report, sys.stdout, indent=1, default=str)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
