"""The command line the MCP test clients share: `--mode auto|legacy`, the server to reach
(`--url URL [--token T]`, or `-- PROGRAM [ARG...]` to start it over stdio), the client's own
options, and the report printed as JSON on stdout for the Rust test to assert on."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Awaitable, Callable

import anyio


def parser(description: str | None) -> argparse.ArgumentParser:
    """A parser with the shared options; add the client's own before `parse`."""
    shared = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    shared.add_argument("--mode", choices=["auto", "legacy"], required=True)
    shared.add_argument("--url")
    shared.add_argument("--token")
    return shared


def parse(shared: argparse.ArgumentParser) -> argparse.Namespace:
    """The options before `--`; the stdio server command after it becomes `args.stdio`.
    Exactly one of `--url` and a command must be given."""
    argv = sys.argv[1:]
    command: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, command = argv[:at], argv[at + 1 :]
    args = shared.parse_args(argv)
    if bool(args.url) == bool(command):
        shared.error("give either --url URL or `-- PROGRAM [ARG...]` (stdio)")
    args.stdio = command
    return args


def report(run: Callable[[argparse.Namespace], Awaitable[Any]], args: argparse.Namespace) -> int:
    """Run the client and print its report; the exit status for `main`."""
    json.dump(anyio.run(run, args), sys.stdout, indent=1, default=str)
    sys.stdout.write("\n")
    return 0
