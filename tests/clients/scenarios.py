"""Drive an mcp-toolbelt example server with the official MCP Python SDK and report what
happened, as one JSON object on stdout (scenario name -> observations).

The Rust integration tests (tests/tests/server_*.rs) run this with the venv that
scripts/setup-python.sh creates and assert on the report; this script only observes,
so every check lives in one place, next to the test that needs it.

Usage:
  scenarios.py --mode auto|legacy SCENARIO... -- PROGRAM [ARG...]    (stdio)
  scenarios.py --mode auto|legacy --url URL [--token TOKEN] SCENARIO...
  scenarios.py --mode auto|legacy --url URL --oauth-client ID --oauth-secret S
               --oauth-issuer URL --oauth-scope SCOPES SCENARIO...
    (the SDK's own OAuth client-credentials flow: it follows the server's 401 to the
    protected-resource metadata and the authorization server, gets a token and retries;
    the report's "_requests" lists every HTTP request the client made, in order)

Each scenario runs on the same connection, in the order given, under its own deadline;
an exception inside one is reported as {"error": {...}} and the next one still runs.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any, Awaitable, Callable

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

import client_cli

# The SDK flags the logging feature as deprecated (SEP-2577); the tests use it on purpose.
warnings.simplefilter("ignore")

SCENARIO_DEADLINE_S = 30.0


class Observer:
    """Collects the notifications the session surfaces."""

    def __init__(self) -> None:
        self.logs: list[dict[str, Any]] = []
        self.notifications: list[str] = []
        self.list_changed = anyio.Event()

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append({"level": params.level, "data": params.data})

    async def on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.notifications.append(f"exception: {message!r}")
            return
        root = getattr(message, "root", message)
        method = getattr(root, "method", type(root).__name__)
        self.notifications.append(method)
        if method == "notifications/tools/list_changed":
            self.list_changed.set()


def error_report(exc: BaseException) -> dict[str, Any]:
    report: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, MCPError):
        report["code"] = exc.code
    return report


def result_report(result: types.CallToolResult) -> dict[str, Any]:
    texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
    return {
        "is_error": bool(result.is_error),
        "text": "\n".join(texts),
        "structured": result.structured_content,
    }


async def call(client: Client, name: str, arguments: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    """A tools/call, reported as a result or as a protocol error."""
    try:
        return {"result": result_report(await client.call_tool(name, arguments or {}, **kw))}
    except MCPError as exc:
        return {"error": error_report(exc)}


async def list_all(client: Client) -> list[types.Tool]:
    """Every tool, following nextCursor page by page."""
    tools: list[types.Tool] = []
    cursor = None
    for _ in range(100):
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


async def list_names(client: Client) -> list[str]:
    return [tool.name for tool in await list_all(client)]


# --- scenarios ---------------------------------------------------------------------------


async def s_info(client: Client, obs: Observer) -> dict[str, Any]:
    info = client.server_info
    caps = client.server_capabilities
    return {
        "name": info.name if info else None,
        "version": info.version if info else None,
        "protocol_version": client.protocol_version,
        "tools_list_changed": bool(caps.tools and caps.tools.list_changed),
        "logging": caps.logging is not None,
    }


async def s_list(client: Client, obs: Observer) -> dict[str, Any]:
    first = await client.list_tools(cache_mode="bypass")
    tools = {tool.name: tool for tool in await list_all(client)}
    word_stats = tools.get("word_stats")
    return {
        "names": list(tools),
        "first_page": [tool.name for tool in first.tools],
        "next_cursor": first.next_cursor,
        "ttl_ms": getattr(first, "ttl_ms", None),
        "cache_scope": getattr(first, "cache_scope", None),
        "word_stats_output_schema": word_stats.output_schema if word_stats else None,
        "echo_input_schema": tools["echo"].input_schema if "echo" in tools else None,
    }


async def s_bad_cursor(client: Client, obs: Observer) -> dict[str, Any]:
    try:
        await client.list_tools(cursor="not-a-cursor", cache_mode="bypass")
        return {"error": None}
    except MCPError as exc:
        return {"error": error_report(exc)}


async def s_echo(client: Client, obs: Observer) -> dict[str, Any]:
    return await call(client, "echo", {"message": "hello from python"})


async def s_json(client: Client, obs: Observer) -> dict[str, Any]:
    return await call(client, "word_stats", {"text": "one two three\nfour"})


async def s_state(client: Client, obs: Observer) -> dict[str, Any]:
    first = await call(client, "counter_add", {"amount": 5})
    second = await call(client, "counter_add", {"amount": 7})
    return {"first": first, "second": second}


async def s_bad_arguments(client: Client, obs: Observer) -> dict[str, Any]:
    return {
        "wrong_type": await call(client, "counter_add", {"amount": "lots"}),
        "missing": await call(client, "echo", {}),
        "out_of_range": await call(client, "counter_add", {"amount": -3}),
    }


async def s_unknown_tool(client: Client, obs: Observer) -> dict[str, Any]:
    return await call(client, "no_such_tool", {})


async def s_hidden_tool(client: Client, obs: Observer) -> dict[str, Any]:
    return {
        "listed": "tool_toggle" in await list_names(client),
        "call": await call(client, "tool_toggle", {"tool": "echo", "enabled": True}),
    }


async def s_timeout(client: Client, obs: Observer) -> dict[str, Any]:
    outcome = await call(client, "slow_count", {"steps": 100, "delay_ms": 100})
    after = await call(client, "echo", {"message": "still here"})
    return {"call": outcome, "after": after}


async def s_panic(client: Client, obs: Observer) -> dict[str, Any]:
    crashed = await call(client, "crash", {})
    after = await call(client, "echo", {"message": "after the panic"})
    return {"crash": crashed, "after": after}


async def s_progress(client: Client, obs: Observer) -> dict[str, Any]:
    events: list[dict[str, Any]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        events.append({"progress": progress, "total": total, "message": message})

    logs_before = len(obs.logs)
    outcome = await call(client, "slow_count", {"steps": 3, "delay_ms": 20}, progress_callback=on_progress)
    # Notifications precede the response on the wire; give the session a moment to hand
    # the last ones to the callbacks.
    with anyio.move_on_after(2.0):
        while len(obs.logs) - logs_before < 3:
            await anyio.sleep(0.02)
    return {"call": outcome, "progress": events, "logs": obs.logs[logs_before:]}


async def s_log_level(client: Client, obs: Observer) -> dict[str, Any]:
    """legacy: logging/setLevel to warning, then the info logs of slow_count must not come."""
    await client.set_logging_level("warning")
    logs_before = len(obs.logs)
    outcome = await call(client, "slow_count", {"steps": 2, "delay_ms": 10})
    # A marker call after it: anything the slow call sent has arrived by its response.
    await call(client, "echo", {"message": "marker"})
    return {"call": outcome, "logs": obs.logs[logs_before:]}


async def s_cancel(client: Client, obs: Observer) -> dict[str, Any]:
    started = anyio.Event()
    outcome: dict[str, Any] = {"finished": False}

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    async def slow() -> None:
        await client.call_tool("slow_count", {"steps": 15, "delay_ms": 100}, progress_callback=on_progress)
        outcome["finished"] = True

    before = (await call(client, "slow_runs", {}))["result"]["structured"]
    async with anyio.create_task_group() as group:
        group.start_soon(slow)
        with anyio.fail_after(10):
            await started.wait()
        group.cancel_scope.cancel()
    # The server drops the call's future when the cancellation arrives; poll its counters.
    runs = None
    for _ in range(100):
        runs = (await call(client, "slow_runs", {}))["result"]["structured"]
        if runs["abandoned"] > before["abandoned"]:
            break
        await anyio.sleep(0.05)
    after = await call(client, "echo", {"message": "after the cancel"})
    return {"client_call_finished": outcome["finished"], "before": before, "runs": runs, "after": after}


async def s_list_changed(client: Client, obs: Observer) -> dict[str, Any]:
    """Disable word_stats at runtime; a list_changed notification must come and the tool
    must vanish from the list and answer as unknown; then enable it again."""
    modern = client.protocol_version >= "2026-07-28"
    received = False
    if modern:
        async with client.listen(tools_list_changed=True) as sub:
            toggled = await call(client, "tool_toggle", {"tool": "word_stats", "enabled": False})
            with anyio.move_on_after(10):
                async for event in sub:
                    received = type(event).__name__ == "ToolsListChanged"
                    break
    else:
        obs.list_changed = anyio.Event()
        toggled = await call(client, "tool_toggle", {"tool": "word_stats", "enabled": False})
        with anyio.move_on_after(10):
            await obs.list_changed.wait()
            received = True
    listed_after = "word_stats" in await list_names(client)
    call_after = await call(client, "word_stats", {"text": "x"})
    restored = await call(client, "tool_toggle", {"tool": "word_stats", "enabled": True})
    listed_restored = "word_stats" in await list_names(client)
    return {
        "modern": modern,
        "toggle": toggled,
        "notification_received": received,
        "listed_after_disable": listed_after,
        "call_after_disable": call_after,
        "restore": restored,
        "listed_after_restore": listed_restored,
    }


SCENARIOS: dict[str, Callable[[Client, Observer], Awaitable[dict[str, Any]]]] = {
    name[2:]: fn for name, fn in globals().items() if name.startswith("s_") and callable(fn)
}


class MemoryTokenStorage:
    """The SDK's TokenStorage, in memory: the tokens live as long as the run."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


async def run(args: argparse.Namespace) -> dict[str, Any]:
    obs = Observer()
    requests: list[str] = []
    if args.url:
        headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
        auth = None
        hooks: dict[str, list[Any]] = {}
        if args.oauth_client:
            from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider

            auth = ClientCredentialsOAuthProvider(
                server_url=args.url,
                storage=MemoryTokenStorage(),
                client_id=args.oauth_client,
                client_secret=args.oauth_secret,
                scope=args.oauth_scope,
                issuer=args.oauth_issuer,
            )

            async def record(response: httpx2.Response) -> None:
                requests.append(f"{response.request.method} {response.request.url} {response.status_code}")

            hooks = {"response": [record]}
        http_client = httpx2.AsyncClient(
            headers=headers, auth=auth, event_hooks=hooks, timeout=httpx2.Timeout(30.0, read=60.0)
        )
        server: Any = streamable_http_client(args.url, http_client=http_client)
    else:
        server = StdioServerParameters(command=args.stdio[0], args=args.stdio[1:])
    report: dict[str, Any] = {}
    async with Client(
        server,
        mode=args.mode,
        logging_callback=obs.on_log,
        message_handler=obs.on_message,
        log_level="debug" if args.mode != "legacy" else None,
        read_timeout_seconds=60,
    ) as client:
        for name in args.scenarios:
            scenario = SCENARIOS[name]
            try:
                with anyio.fail_after(SCENARIO_DEADLINE_S):
                    report[name] = await scenario(client, obs)
            except Exception as exc:  # reported, not raised: the Rust test asserts on it
                report[name] = {"error": error_report(exc)}
    report["_notifications"] = obs.notifications
    if requests:
        report["_requests"] = requests
    return report


def main() -> int:
    parser = client_cli.parser(__doc__)
    parser.add_argument("--oauth-client")
    parser.add_argument("--oauth-secret")
    parser.add_argument("--oauth-issuer")
    parser.add_argument("--oauth-scope")
    parser.add_argument("scenarios", nargs="+", choices=sorted(SCENARIOS), metavar="SCENARIO")
    return client_cli.report(run, client_cli.parse(parser))

if __name__ == "__main__":
    sys.exit(main())
