#!/usr/bin/env python3
"""Time one debugger step two ways on examples/debugger/programs/loop.py:

  direct  a minimal DAP client on debugpy's adapter: stepIn, wait for `stopped`, stackTrace
          (the least any client must do to say where the program stopped);
  server  debugger-mcp over stdio: a `debug_step kind=into` tool call (the same DAP work, plus
          the code snapshot, the envelope and the JSON-RPC round trip).

Usage: scripts/perf/debugger-steps.py PYTHON DEBUGGER_MCP [STEPS]
  PYTHON        the interpreter with debugpy (the test venv: $MCP_TOOLBELT_PYTHON)
  DEBUGGER_MCP  the built binary (target/release/debugger-mcp for release figures)
  STEPS         steps to time each way (default 200); sessions restart when the program ends
Prints the median and p99 of each, in milliseconds.
"""
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../examples/debugger/programs")
ROOT = os.path.realpath(ROOT)
PROGRAM = os.path.join(ROOT, "loop.py")
DEADLINE = 10.0  # seconds any single wait may take


class Dap:
    def __init__(self, python):
        self.proc = subprocess.Popen(
            [python, "-m", "debugpy.adapter"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.seq = 0
        self.messages = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = out.read(1)
                if not byte:
                    self.messages.put(None)
                    return
                header += byte
            length = int(header.split(b":")[1].split(b"\r\n")[0])
            self.messages.put(json.loads(out.read(length)))

    def send(self, command, arguments=None):
        self.seq += 1
        body = json.dumps(
            {"seq": self.seq, "type": "request", "command": command, "arguments": arguments or {}}
        ).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return self.seq

    def wait(self, match):
        end = time.monotonic() + DEADLINE
        while True:
            message = self.messages.get(timeout=max(0.0, end - time.monotonic()))
            if message is None:
                raise RuntimeError("the adapter exited")
            if match(message):
                return message

    def request(self, command, arguments=None):
        seq = self.send(command, arguments)
        return self.wait(lambda m: m.get("type") == "response" and m.get("request_seq") == seq)

    def event(self, name):
        return self.wait(lambda m: m.get("type") == "event" and m.get("event") in name)

    def close(self):
        self.proc.kill()
        self.proc.wait()


def direct(python, steps):
    times = []
    while len(times) < steps:
        dap = Dap(python)
        dap.request("initialize", {"adapterID": "debugpy", "linesStartAt1": True, "pathFormat": "path"})
        launch = dap.send("launch", {"program": PROGRAM, "cwd": ROOT, "console": "internalConsole",
                                     "python": [python], "justMyCode": True})
        dap.event(("initialized",))
        dap.request("setBreakpoints", {"source": {"path": PROGRAM}, "breakpoints": [{"line": 5}]})
        dap.request("configurationDone")
        dap.wait(lambda m: m.get("type") == "response" and m.get("request_seq") == launch)
        stop = dap.event(("stopped", "terminated"))
        while stop["event"] == "stopped" and len(times) < steps:
            thread = stop["body"]["threadId"]
            began = time.perf_counter()
            dap.send("stepIn", {"threadId": thread})
            stop = dap.event(("stopped", "terminated"))
            if stop["event"] == "stopped":
                dap.request("stackTrace", {"threadId": thread, "startFrame": 0, "levels": 1})
            times.append(time.perf_counter() - began)
        dap.close()
    return times


def server(python, binary, steps):
    proc = subprocess.Popen([binary, "--root", ROOT, "--python", python, "serve"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    ids = [0]

    def rpc(method, params):
        ids[0] += 1
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": ids[0], "method": method, "params": params}) + "\n")
        proc.stdin.flush()
        while True:
            message = json.loads(proc.stdout.readline())
            if message.get("id") == ids[0]:
                return message

    def call(name, **arguments):
        return rpc("tools/call", {"name": name, "arguments": arguments})["result"]["structuredContent"]

    rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "perf", "version": "1"}})
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    times = []
    while len(times) < steps:
        started = call("debug_start", program="loop.py", breakpoints=["loop.py:5"])
        session = started["data"]["session_id"]
        state = started["data"]["state"]
        while state == "stopped" and len(times) < steps:
            began = time.perf_counter()
            state = call("debug_step", session_id=session, kind="into")["data"]["state"]
            times.append(time.perf_counter() - began)
        call("debug_stop", session_id=session)
    proc.stdin.close()
    proc.wait(timeout=DEADLINE)
    return times


def report(name, times):
    times = sorted(times)
    p99 = times[min(len(times) - 1, len(times) * 99 // 100)]
    print(f"{name:7} {len(times)} steps: median {statistics.median(times) * 1000:.1f} ms, "
          f"p99 {p99 * 1000:.1f} ms")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    python, binary = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    report("direct", direct(python, steps))
    report("server", server(python, binary, steps))


if __name__ == "__main__":
    main()
