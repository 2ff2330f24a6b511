#!/usr/bin/env python3
"""`execute_command echo` through system-tools-mcp over stdio, one server per sandbox layout,
calls interleaved round by round so the machine's load hits every layout alike.

usage: system-tools-exec.py BINARY CALLS LABEL=CONFIG...

Prints, per layout, the first call (which starts the sandbox holder when there is one) and
the median, 10th and 90th percentile of the rest, in ms, then each median as a ratio to the
first layout's (the baseline, measured in the same run). Only the standard library.
"""
import json
import statistics
import subprocess
import sys
import time

MAX_CALLS = 2000


def start(binary, config):
    proc = subprocess.Popen(
        [binary, "--config", config, "serve", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    send(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "perf", "version": "0"}}})
    reply(proc, 0)
    send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return proc


def send(proc, msg):
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()


def reply(proc, want):
    # Bounded: a server sends at most a few notifications before its reply.
    for _ in range(100):
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("the server ended")
        msg = json.loads(line)
        if msg.get("id") == want:
            return msg
    raise SystemExit(f"no reply to request {want}")


def call(proc, ident):
    started = time.perf_counter()
    send(proc, {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": {
        "name": "execute_command", "arguments": {"command": "echo", "args": ["hi"]}}})
    msg = reply(proc, ident)
    took = (time.perf_counter() - started) * 1000
    result = msg.get("result", {})
    if result.get("isError") or "hi" not in json.dumps(result.get("content")):
        raise SystemExit(f"the call failed: {msg}")
    return took


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    binary, calls = sys.argv[1], min(int(sys.argv[2]), MAX_CALLS)
    layouts = [a.split("=", 1) for a in sys.argv[3:]]
    servers = [(label, start(binary, config)) for label, config in layouts]
    times = {label: [] for label, _ in servers}
    for i in range(1, calls + 1):
        for label, proc in servers:
            times[label].append(call(proc, i))
    for _, proc in servers:
        proc.stdin.close()
        proc.wait(timeout=30)
    base = None
    for label, _ in servers:
        rest = sorted(times[label][1:])
        median = statistics.median(rest)
        deciles = statistics.quantiles(rest, n=10)
        base = base or median
        print(f"{label}: first call {times[label][0]:.1f} ms; median {median:.2f} ms "
              f"(p10 {deciles[0]:.2f}, p90 {deciles[-1]:.2f}) over {len(rest)} calls; "
              f"{median / base:.2f}x the baseline")


main()
