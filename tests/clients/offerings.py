"""Drive the conformance example server (examples/conformance) with the official MCP Python
SDK through resources, resource templates, prompts, completion, resource subscriptions,
and a tool's sampling and elicitation requests; print what happened as one JSON object
(scenario name -> observations) on stdout.

tests/tests/conformance.rs runs this with the venv of scripts/setup-python.sh and asserts
on the report; this script only observes.

Usage:
  offerings.py --mode auto|legacy [--no-client-capabilities] SCENARIO... --url URL
  offerings.py --mode auto|legacy [--no-client-capabilities] SCENARIO... -- PROGRAM [ARG...]
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import warnings
from typing import Any, Awaitable, Callable

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from scenarios import error_report

# The SDK flags subscribe/sampling as deprecated on 2026-07-28; the tests use them on purpose.
warnings.simplefilter("ignore")

SCENARIO_DEADLINE_S = 30.0
WATCHED = "test://watched-resource"


class Observer:
    """What the client side saw: notifications, and the server's requests to the client."""

    def __init__(self) -> None:
        self.updated: list[str] = []
        self.update_event = anyio.Event()
        self.sampling_requests: list[dict[str, Any]] = []
        self.elicitation_requests: list[dict[str, Any]] = []
        self.elicit_action = "accept"

    async def on_message(self, message: Any) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            self.updated.append(root.params.uri)
            self.update_event.set()

    async def on_sampling(self, context: Any, params: Any) -> Any:
        self.sampling_requests.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="pong from the python client"),
            model="test-model",
            stop_reason="endTurn",
        )

    async def on_elicitation(self, context: Any, params: Any) -> Any:
        self.elicitation_requests.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))
        if self.elicit_action != "accept":
            return types.ElicitResult(action=self.elicit_action)
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})


def dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def attempt(coro: Awaitable[Any]) -> dict[str, Any]:
    """A request, reported as its JSON result or as a protocol error."""
    try:
        return {"result": dump(await coro)}
    except MCPError as exc:
        return {"error": error_report(exc)}


async def call(client: Client, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    try:
        result = await client.call_tool(name, arguments or {})
    except MCPError as exc:
        return {"error": error_report(exc)}
    texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
    return {"is_error": bool(result.is_error), "text": "\n".join(texts)}


# --- scenarios ---------------------------------------------------------------------------


async def s_capabilities(client: Client, obs: Observer) -> dict[str, Any]:
    caps = client.server_capabilities
    return {
        "protocol_version": client.protocol_version,
        "resources": dump(caps.resources) if caps.resources else None,
        "prompts": dump(caps.prompts) if caps.prompts else None,
        "completions": caps.completions is not None,
    }


async def s_lists(client: Client, obs: Observer) -> dict[str, Any]:
    resources = await client.list_resources(cache_mode="bypass")
    templates = await client.list_resource_templates(cache_mode="bypass")
    prompts = await client.list_prompts(cache_mode="bypass")
    return {
        "resources": [dump(r) for r in resources.resources],
        "templates": [dump(t) for t in templates.resource_templates],
        "prompts": [dump(p) for p in prompts.prompts],
    }


async def s_read(client: Client, obs: Observer) -> dict[str, Any]:
    binary = await attempt(client.read_resource("test://static-binary", cache_mode="bypass"))
    blob = binary.get("result", {}).get("contents", [{}])[0].get("blob")
    return {
        "text": await attempt(client.read_resource("test://static-text", cache_mode="bypass")),
        "binary": binary,
        "binary_decoded_prefix": base64.b64decode(blob)[:8].hex() if blob else None,
        "template": await attempt(client.read_resource("test://template/4711/data", cache_mode="bypass")),
        "unknown": await attempt(client.read_resource("test://no/such/resource", cache_mode="bypass")),
    }


async def s_prompts(client: Client, obs: Observer) -> dict[str, Any]:
    return {
        "simple": await attempt(client.get_prompt("test_simple_prompt")),
        "with_args": await attempt(
            client.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
        ),
        "embedded": await attempt(
            client.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://x"})
        ),
        "image": await attempt(client.get_prompt("test_prompt_with_image")),
        "missing_argument": await attempt(client.get_prompt("test_prompt_with_arguments", {"arg1": "a"})),
        "unknown": await attempt(client.get_prompt("no_such_prompt")),
    }


async def s_complete(client: Client, obs: Observer) -> dict[str, Any]:
    prompt = types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
    template = types.ResourceTemplateReference(type="ref/resource", uri="test://template/{id}/data")
    return {
        "prompt_arg": await attempt(client.complete(prompt, {"name": "arg1", "value": "par"})),
        "prompt_no_fn": await attempt(client.complete(prompt, {"name": "arg2", "value": "w"})),
        "template_var": await attempt(client.complete(template, {"name": "id", "value": "4"})),
        "unknown_prompt": await attempt(
            client.complete(
                types.PromptReference(type="ref/prompt", name="nope"), {"name": "x", "value": ""}
            )
        ),
    }


async def wait_update(obs: Observer, seconds: float) -> bool:
    """Wait for the event armed before the triggering call."""
    with anyio.move_on_after(seconds):
        await obs.update_event.wait()
        return True
    return False


async def s_subscribe(client: Client, obs: Observer) -> dict[str, Any]:
    """Subscribe, change the resource (a notification must come), unsubscribe, change it
    again (none may come), subscribe to an unknown URI (an error)."""
    subscribed = await attempt(client.subscribe_resource(WATCHED))
    before = await attempt(client.read_resource(WATCHED, cache_mode="bypass"))
    obs.update_event = anyio.Event()
    first = await call(client, "test_update_watched_resource")
    got_first = await wait_update(obs, 10.0)
    after = await attempt(client.read_resource(WATCHED, cache_mode="bypass"))
    unsubscribed = await attempt(client.unsubscribe_resource(WATCHED))
    updates_before_second = list(obs.updated)
    obs.update_event = anyio.Event()
    second = await call(client, "test_update_watched_resource")
    got_second = await wait_update(obs, 1.0)
    return {
        "subscribe": subscribed,
        "before": before,
        "update": first,
        "notified": got_first,
        "after": after,
        "unsubscribe": unsubscribed,
        "second_update": second,
        "notified_after_unsubscribe": got_second,
        "updated_uris": updates_before_second,
        "unknown": await attempt(client.subscribe_resource("test://nothing-here")),
    }


async def s_listen(client: Client, obs: Observer) -> dict[str, Any]:
    """2026-07-28: a `subscriptions/listen` stream naming the URI gets its updates."""
    events: list[str] = []
    async with client.listen(resource_subscriptions=[WATCHED]) as sub:
        update = await call(client, "test_update_watched_resource")
        with anyio.move_on_after(10):
            async for event in sub:
                events.append(type(event).__name__ + ":" + str(getattr(event, "uri", "")))
                break
    return {"update": update, "events": events}


async def s_sampling(client: Client, obs: Observer) -> dict[str, Any]:
    result = await call(client, "test_sampling", {"prompt": "ping from the server"})
    return {"call": result, "requests": obs.sampling_requests}


async def s_elicitation(client: Client, obs: Observer) -> dict[str, Any]:
    accepted = await call(client, "test_elicitation", {"message": "Who are you?"})
    obs.elicit_action = "decline"
    declined = await call(client, "test_elicitation", {"message": "Who are you, really?"})
    obs.elicit_action = "accept"
    return {"accepted": accepted, "declined": declined, "requests": obs.elicitation_requests}


SCENARIOS: dict[str, Callable[[Client, Observer], Awaitable[dict[str, Any]]]] = {
    name[2:]: fn for name, fn in globals().items() if name.startswith("s_") and callable(fn)
}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    server: Any = args.url or StdioServerParameters(command=args.stdio[0], args=args.stdio[1:])
    report: dict[str, Any] = {}
    obs = Observer()
    callbacks: dict[str, Any] = {}
    if not args.no_client_capabilities:
        callbacks = {"sampling_callback": obs.on_sampling, "elicitation_callback": obs.on_elicitation}
    async with Client(
        server,
        mode=args.mode,
        message_handler=obs.on_message,
        read_timeout_seconds=60,
        **callbacks,
    ) as client:
        for name in args.scenarios:
            try:
                with anyio.fail_after(SCENARIO_DEADLINE_S):
                    report[name] = await SCENARIOS[name](client, obs)
            except Exception as exc:  # reported, not raised: the Rust test asserts on it
                report[name] = {"error": error_report(exc)}
    return report


def main() -> int:
    argv = sys.argv[1:]
    command: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, command = argv[:at], argv[at + 1 :]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["auto", "legacy"], required=True)
    parser.add_argument("--url")
    parser.add_argument(
        "--no-client-capabilities",
        action="store_true",
        help="declare neither sampling nor elicitation",
    )
    parser.add_argument("scenarios", nargs="*", metavar="SCENARIO")
    args = parser.parse_args(argv)
    args.stdio = command
    unknown = [s for s in args.scenarios if s not in SCENARIOS]
    if unknown or not args.scenarios or not (args.url or command):
        parser.error(f"unknown or missing scenarios {unknown}; known: {sorted(SCENARIOS)}")
    print(json.dumps(anyio.run(run, args), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
