"""Drive the `ask-tools` fixture's `interview` tool (two elicitations, one sampling) with the
official MCP Python SDK and report what happened, as one JSON object on stdout (scenario
name -> observations).

On MCP 2026-07-28 (`--mode auto`) the call answers `input_required` and the SDK retries
with `inputResponses` and the `requestState`; in `legacy` mode the server sends real
elicitation and sampling requests. The attack scenarios take the first `input_required`
result by hand (`allow_input_required=True`) and send back a retry that must be refused.

Usage:
  resumable.py --mode auto|legacy SCENARIO... -- PROGRAM [ARG...]          (stdio)
  resumable.py --mode auto|legacy --url URL [--token T] [--other-url URL2] [--other-token T2] SCENARIO...

The "other" client (`--other-url`, `--other-token`; each defaults to the first client's)
is another caller, or the same caller on another replica.
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

from scenarios import result_report

# The SDK flags sampling as deprecated (SEP-2577); the tests use it on purpose.
warnings.simplefilter("ignore")

SCENARIO_DEADLINE_S = 30.0
TOPIC = {"topic": "the survey"}


class Answers:
    """The client's side: what the user and the LLM answer, and what was asked."""

    def __init__(self, name: str = "Ada") -> None:
        self.name = name
        self.asked: list[str] = []

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(f"elicitation: {params.message}")
        field = next(iter(params.requested_schema["properties"]))
        value = self.name if field == "name" else "teal"
        return types.ElicitResult(action="accept", content={field: value})

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.asked.append("sampling")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="a teal fan"),
            model="fixture-llm",
        )


def error_report(exc: BaseException) -> dict[str, Any]:
    report: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, MCPError):
        report["code"] = exc.code
        report["data"] = exc.error.data
    return report


def answer(request: Any) -> Any:
    """The response a well-behaved client gives to one input request."""
    root = getattr(request, "root", request)
    if getattr(root, "method", "") == "sampling/createMessage":
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="a teal fan"), model="fixture-llm"
        )
    field = next(iter(root.params.requested_schema["properties"]))
    return types.ElicitResult(action="accept", content={field: "Ada" if field == "name" else "teal"})


async def first_round(client: Client, arguments: dict[str, Any] = TOPIC) -> types.InputRequiredResult:
    result = await client.session.call_tool("interview", arguments, allow_input_required=True)
    assert isinstance(result, types.InputRequiredResult), f"expected input_required, got {result!r}"
    return result


def responses(result: types.InputRequiredResult) -> dict[str, Any]:
    return {key: answer(request) for key, request in (result.input_requests or {}).items()}


async def retry(
    client: Client,
    responses: dict[str, Any] | None,
    state: str | None,
    arguments: dict[str, Any] = TOPIC,
    name: str = "interview",
) -> dict[str, Any]:
    """A retry reported as its result, an `input_required` summary, or a protocol error."""
    try:
        result = await client.session.call_tool(
            name, arguments, input_responses=responses, request_state=state, allow_input_required=True
        )
    except MCPError as exc:
        return {"error": error_report(exc)}
    if isinstance(result, types.InputRequiredResult):
        return {"input_required": sorted(result.input_requests or {})}
    return {"result": result_report(result)}


async def runs(client: Client) -> int:
    result = await client.call_tool("interview_runs", {})
    return int(result.content[0].text)


# --- scenarios ---------------------------------------------------------------------------


async def s_interview(client: Client, answers: Answers, other: Client | None) -> dict[str, Any]:
    """The whole call through the SDK's own retry loop (or legacy requests)."""
    before = await runs(client)
    result = await client.call_tool("interview", TOPIC)
    return {"result": result_report(result), "asked": list(answers.asked), "runs": await runs(client) - before}


async def s_rounds(client: Client, answers: Answers, other: Client | None) -> dict[str, Any]:
    """The rounds by hand: the request ids each round asks for, then the result."""
    rounds: list[Any] = []
    result = await first_round(client)
    for _ in range(5):
        rounds.append(sorted(result.input_requests or {}))
        reply = await client.session.call_tool(
            "interview",
            TOPIC,
            input_responses=responses(result),
            request_state=result.request_state,
            allow_input_required=True,
        )
        if not isinstance(reply, types.InputRequiredResult):
            return {"rounds": rounds, "result": result_report(reply), "state_bytes": len(result.request_state or "")}
        result = reply
    return {"rounds": rounds, "error": "no result after 5 rounds"}


async def s_prompt_and_resource(client: Client, answers: Answers, other: Client | None) -> dict[str, Any]:
    """prompts/get and resources/read that ask once each, through the SDK's retry loop."""
    prompt = await client.get_prompt("greeting", {"salutation": "Hello"})
    resource = await client.read_resource("ask://colour")
    return {
        "prompt": [m.content.text for m in prompt.messages],
        "resource": [c.text for c in resource.contents],
        "asked": list(answers.asked),
    }


async def s_tampered(client: Client, answers: Answers, other: Client | None) -> dict[str, Any]:
    """One character of the state's body changed."""
    result = await first_round(client)
    state = result.request_state
    at = len(state) // 2
    forged = state[:at] + ("A" if state[at] != "A" else "B") + state[at + 1 :]
    return await retry(client, responses(result), forged)


async def s_other_arguments(client: Client, answers: Answers, other: Client | None) -> dict[str, Any]:
    """The state of one call replayed for the same tool with other arguments."""
    result = await first_round(client)
    return await retry(client, responses(result), result.request_state, arguments={"topic": "another survey"})


async def s_other_tool(client: Client, answers: Answers, other: Client | None) -> dict[str, Any]:
    """The state of one call replayed for another tool."""
    result = await first_round(client)
    return await retry(client, responses(result), result.request_state, arguments={}, name="interview_runs")


async def s_other_caller(client: Client, answers: Answers, other: Client | None) -> dict[str, Any]:
    """The state one caller got, sent back by another (`--other-token`)."""
    assert other is not None, "other_caller needs --other-token"
    result = await first_round(client)
    return await retry(other, responses(result), result.request_state)


async def s_other_replica(client: Client, answers: Answers, other: Client | None) -> dict[str, Any]:
    """The state one server issued, sent back to another (`--other-url`)."""
    assert other is not None, "other_replica needs --other-url"
    result = await first_round(client)
    return await retry(other, responses(result), result.request_state)


async def s_expired(client: Client, answers: Answers, other: Client | None) -> dict[str, Any]:
    """The retry 1.5 s after the state was issued (run the server with a shorter TTL)."""
    result = await first_round(client)
    await anyio.sleep(1.5)
    return await retry(client, responses(result), result.request_state)


async def s_oversized(client: Client, answers: Answers, other: Client | None) -> dict[str, Any]:
    """A requestState of 70,000 bytes."""
    result = await first_round(client)
    return await retry(client, responses(result), "rs1." + "A" * 69_996)


async def s_missing_response(client: Client, answers: Answers, other: Client | None) -> dict[str, Any]:
    """The state sent back without the answer it asks for: the question comes again."""
    result = await first_round(client)
    return await retry(client, {}, result.request_state)


async def s_replayed(client: Client, answers: Answers, other: Client | None) -> dict[str, Any]:
    """The same retry sent twice: both continue the call (documented: valid until expiry)."""
    result = await first_round(client)
    first = await retry(client, responses(result), result.request_state)
    second = await retry(client, responses(result), result.request_state)
    return {"first": first, "second": second}


async def s_big_answers(client: Client, answers: Answers, other: Client | None) -> dict[str, Any]:
    """The user answers with a 70,000-character name: the next state would be too big."""
    answers.name = "N" * 70_000
    try:
        result = await client.call_tool("interview", TOPIC)
    except MCPError as exc:
        return {"error": error_report(exc)}
    return {"result": result_report(result)}


SCENARIOS: dict[str, Callable[[Client, Answers, Client | None], Awaitable[dict[str, Any]]]] = {
    name[2:]: fn for name, fn in globals().items() if name.startswith("s_") and callable(fn)
}


def connect(args: argparse.Namespace, answers: Answers, token: str | None, url: str | None) -> Client:
    if url:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        http_client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=60.0))
        server: Any = streamable_http_client(url, http_client=http_client)
    else:
        server = StdioServerParameters(command=args.stdio[0], args=args.stdio[1:])
    return Client(
        server,
        mode=args.mode,
        elicitation_callback=answers.elicit,
        sampling_callback=answers.sample,
        read_timeout_seconds=60,
    )


async def run(args: argparse.Namespace) -> dict[str, Any]:
    answers = Answers()
    report: dict[str, Any] = {}
    async with connect(args, answers, args.token, args.url) as client:
        other = None
        if args.other_token or args.other_url:
            other = connect(args, Answers(), args.other_token or args.token, args.other_url or args.url)
        if other is not None:
            await other.__aenter__()
        try:
            for name in args.scenarios:
                try:
                    with anyio.fail_after(SCENARIO_DEADLINE_S):
                        report[name] = await SCENARIOS[name](client, answers, other)
                except Exception as exc:  # reported, not raised: the Rust test asserts on it
                    report[name] = {"error": error_report(exc)}
        finally:
            if other is not None:
                await other.__aexit__(None, None, None)
    return report


def main() -> int:
    parser = client_cli.parser(__doc__)
    parser.add_argument("--other-url")
    parser.add_argument("--other-token")
    parser.add_argument("scenarios", nargs="+", choices=sorted(SCENARIOS), metavar="SCENARIO")
    return client_cli.report(run, client_cli.parse(parser))

if __name__ == "__main__":
    sys.exit(main())
