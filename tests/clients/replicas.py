"""Drive several replicas of an mcp-toolbelt server behind one load balancer with the official
MCP Python SDK, kill one replica in the middle, and report what the client saw, as one JSON
object on stdout. Every HTTP response's `Mcp-Replica` header (`serve --replica-id`) is
recorded, so the report says which replica answered each call.

tests/tests/replicas.rs runs this with the venv of scripts/setup-python.sh and asserts on
the report; this script only observes (and kills the replica it is told to).

Usage:
  replicas.py --mode auto|legacy --url URL [--token T] --calls N --pids ID=PID,... spread
  replicas.py --mode legacy --url URL [--token T] --calls N --pids ID=PID,... sessions
  replicas.py --mode auto --url URL [--token T] --pids ID=PID,... interview

spread:   one client lists the tools and makes N calls, the replica that answered the first
          call is killed, then N more calls. Fits stateless replicas, and 2026-07-28 clients
          (`auto`) on any replica.
interview: one call of ask-tools' `interview` tool, which asks the client twice
          (elicitation) and once more (sampling): each retry is a new request.
sessions: three legacy sessions (each opened by its own client) make N calls each; the
          replica of the first session is killed; that session's next call, then a new
          session in its place and N calls on it; then N more calls on the other two.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import warnings
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from scenarios import error_report

warnings.simplefilter("ignore")

DEADLINE_S = 60.0


class Recorder:
    """Every HTTP exchange of one client: the JSON-RPC method posted, status, replica."""

    def __init__(self) -> None:
        self.exchanges: list[dict[str, Any]] = []

    async def on_response(self, response: httpx2.Response) -> None:
        request = response.request
        rpc = None
        if request.method == "POST":
            try:
                rpc = json.loads(request.content).get("method")
            except (ValueError, AttributeError):
                rpc = None
        self.exchanges.append(
            {
                "http": request.method,
                "rpc": rpc,
                "status": response.status_code,
                "replica": response.headers.get("mcp-replica"),
                "session": response.headers.get("mcp-session-id"),
            }
        )

    def last_replica(self, rpc: str) -> str | None:
        for exchange in reversed(self.exchanges):
            if exchange["rpc"] == rpc:
                return exchange["replica"]
        return None


def open_client(args: argparse.Namespace, recorder: Recorder, **callbacks: Any) -> Client:
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    http_client = httpx2.AsyncClient(
        headers=headers,
        timeout=httpx2.Timeout(30.0, read=60.0),
        event_hooks={"response": [recorder.on_response]},
    )
    return Client(
        streamable_http_client(args.url, http_client=http_client),
        mode=args.mode,
        read_timeout_seconds=30,
        **callbacks,
    )


async def echo(client: Client, recorder: Recorder, text: str) -> dict[str, Any]:
    """One `echo` call: what came back and which replica answered."""
    try:
        result = await client.call_tool("echo", {"message": text})
        texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
        return {"ok": not result.is_error and texts == [text], "replica": recorder.last_replica("tools/call")}
    except MCPError as exc:
        return {"ok": False, "error": error_report(exc), "replica": recorder.last_replica("tools/call")}


async def calls(client: Client, recorder: Recorder, label: str, n: int) -> list[dict[str, Any]]:
    return [await echo(client, recorder, f"{label} {i}") for i in range(n)]


def kill(pids: dict[str, int], replica: str | None) -> int | None:
    pid = pids.get(replica or "")
    if pid is not None:
        os.kill(pid, signal.SIGKILL)
    return pid


async def spread(args: argparse.Namespace, pids: dict[str, int]) -> dict[str, Any]:
    recorder = Recorder()
    report: dict[str, Any] = {}
    async with open_client(args, recorder) as client:
        report["protocol_version"] = client.protocol_version
        report["tools"] = [tool.name for tool in (await client.list_tools()).tools]
        report["list_replica"] = recorder.last_replica("tools/list")
        report["before"] = await calls(client, recorder, "before", args.calls)
        report["killed"] = report["before"][0]["replica"]
        report["killed_pid"] = kill(pids, report["killed"])
        report["after"] = await calls(client, recorder, "after", args.calls)
    report["exchanges"] = recorder.exchanges
    return report


async def sessions(args: argparse.Namespace, pids: dict[str, int]) -> dict[str, Any]:
    report: dict[str, Any] = {}
    recorders = [Recorder() for _ in range(3)]
    async with contextlib.AsyncExitStack() as stack:
        clients = []
        for recorder in recorders:
            clients.append(await stack.enter_async_context(open_client(args, recorder)))
        report["protocol_version"] = clients[0].protocol_version
        report["initialized_on"] = [r.last_replica("initialize") for r in recorders]
        report["before"] = [await calls(c, r, "before", args.calls) for c, r in zip(clients, recorders)]
        report["killed"] = report["initialized_on"][0]
        report["killed_pid"] = kill(pids, report["killed"])
        # The dead replica's session: its next call.
        report["orphaned_call"] = await echo(clients[0], recorders[0], "orphaned")
        # A new session in its place (what a client does on "Session not found").
        recorder = Recorder()
        async with open_client(args, recorder) as client:
            report["reinitialized_on"] = recorder.last_replica("initialize")
            report["reinitialized"] = await calls(client, recorder, "again", args.calls)
        report["others_after"] = [await calls(c, r, "after", args.calls) for c, r in zip(clients[1:], recorders[1:])]
        report["exchanges"] = [r.exchanges for r in recorders]
    return report


ANSWERS = {"name": "Ada", "colour": "teal"}


async def on_elicitation(context: Any, params: Any) -> Any:
    asked = params.model_dump(mode="json", by_alias=True, exclude_none=True)
    field = next(iter(asked["requestedSchema"]["properties"]))
    return types.ElicitResult(action="accept", content={field: ANSWERS.get(field, "?")})


async def on_sampling(context: Any, params: Any) -> Any:
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="a fan of teal"),
        model="test-model",
        stop_reason="endTurn",
    )


async def interview(args: argparse.Namespace, pids: dict[str, int]) -> dict[str, Any]:
    """One `interview` call (two elicitations, one sampling): on 2026-07-28 every round is
    its own tools/call POST, so each may land on another replica."""
    recorder = Recorder()
    report: dict[str, Any] = {}
    async with open_client(args, recorder, elicitation_callback=on_elicitation, sampling_callback=on_sampling) as client:
        report["protocol_version"] = client.protocol_version
        try:
            result = await client.call_tool("interview", {"topic": "the tour"})
            texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
            report["result"] = {"is_error": bool(result.is_error), "text": "\n".join(texts)}
        except MCPError as exc:
            report["error"] = error_report(exc)
    report["rounds"] = [
        {"replica": e["replica"], "status": e["status"]} for e in recorder.exchanges if e["rpc"] == "tools/call"
    ]
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["auto", "legacy"], required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--token")
    parser.add_argument("--calls", type=int, default=6)
    parser.add_argument("--pids", required=True, help="replica id = process id, comma-separated")
    parser.add_argument("flow", choices=["spread", "sessions", "interview"])
    args = parser.parse_args()
    pids = {id_: int(pid) for id_, pid in (pair.split("=", 1) for pair in args.pids.split(","))}
    flow = {"spread": spread, "sessions": sessions, "interview": interview}[args.flow]

    async def run() -> dict[str, Any]:
        with anyio.fail_after(DEADLINE_S):
            return await flow(args, pids)

    report = anyio.run(run)
    json.dump(report, sys.stdout, indent=1, default=str)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
