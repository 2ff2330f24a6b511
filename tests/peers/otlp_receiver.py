"""An OTLP/HTTP receiver for tests: decodes what a server exports with the official
protobuf classes (opentelemetry-proto) and writes one JSON line per span and per metric
data point to --out.

    otlp_receiver.py --out FILE [--count-only] [--require-header 'NAME: VALUE']

Listens on 127.0.0.1 (a free port) and prints `listening on http://127.0.0.1:PORT` on
stderr. Serves `POST /v1/traces` and `POST /v1/metrics` with
`Content-Type: application/x-protobuf` (bodies up to 16 MiB); anything else is 404/415/413.
With --require-header, as a collector asking for an API key does, a request without that
header and value is refused with 401 (and nothing of it written).
Lines:
  {"kind": "span", "name", "trace_id", "span_id", "parent_span_id", "span_kind",
   "status": {"code", "message"}, "attributes": {...}, "resource": {...}}
  {"kind": "metric", "name", "unit", "attributes": {...}, "count" | "value"}
With --count-only (for load runs, where a line per span would make the receiver the
bottleneck) each request is still decoded, and one line per traces request is written:
  {"kind": "spans", "count": N, "names": {name: N, ...}}
and none for metrics.
"""

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

MAX_BODY = 16 * 1024 * 1024


def value_of(any_value):
    """An AnyValue as a plain Python value."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(v) for v in any_value.array_value.values]
    if kind is None:
        return None
    return getattr(any_value, kind)


def attributes(key_values):
    return {kv.key: value_of(kv.value) for kv in key_values}


class Receiver(BaseHTTPRequestHandler):
    lock = threading.Lock()
    out = None
    count_only = False
    required = None

    def log_message(self, *args):  # keep stderr for the announcement
        pass

    def reply(self, status, body=b"", content_type="application/x-protobuf"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        if Receiver.required and self.headers.get(Receiver.required[0]) != Receiver.required[1]:
            return self.reply(401, b"the required header is missing or wrong", "text/plain")
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            return self.reply(413, b"too large", "text/plain")
        body = self.rfile.read(length)
        if not (self.headers.get("Content-Type") or "").startswith("application/x-protobuf"):
            return self.reply(415, b"protobuf only", "text/plain")
        if self.path == "/v1/traces":
            request = trace_service_pb2.ExportTraceServiceRequest()
            request.ParseFromString(body)
            self.write([span_count(request)] if Receiver.count_only else spans(request))
            return self.reply(200, trace_service_pb2.ExportTraceServiceResponse().SerializeToString())
        if self.path == "/v1/metrics":
            request = metrics_service_pb2.ExportMetricsServiceRequest()
            request.ParseFromString(body)
            self.write([] if Receiver.count_only else points(request))
            return self.reply(200, metrics_service_pb2.ExportMetricsServiceResponse().SerializeToString())
        return self.reply(404, b"not found", "text/plain")

    def write(self, records):
        with Receiver.lock:
            for record in records:
                Receiver.out.write(json.dumps(record) + "\n")
            Receiver.out.flush()


def spans(request):
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield {
                    "kind": "span",
                    "name": span.name,
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(),
                    "span_kind": span.kind,
                    "status": {"code": span.status.code, "message": span.status.message},
                    "attributes": attributes(span.attributes),
                    "resource": resource,
                }


def span_count(request):
    names = {}
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                names[span.name] = names.get(span.name, 0) + 1
    return {"kind": "spans", "count": sum(names.values()), "names": names}


def points(request):
    for resource_metrics in request.resource_metrics:
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                data = metric.WhichOneof("data")
                for point in getattr(metric, data).data_points:
                    record = {
                        "kind": "metric",
                        "name": metric.name,
                        "unit": metric.unit,
                        "attributes": attributes(point.attributes),
                    }
                    if data == "histogram":
                        record["count"] = point.count
                    elif point.WhichOneof("value") == "as_int":
                        record["value"] = point.as_int
                    else:
                        record["value"] = point.as_double
                    yield record


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--count-only", action="store_true")
    parser.add_argument("--require-header", help="NAME: VALUE")
    args = parser.parse_args()
    if args.require_header:
        name, _, value = args.require_header.partition(":")
        Receiver.required = (name.strip(), value.strip())
    Receiver.out = open(args.out, "a", encoding="utf-8")
    Receiver.count_only = args.count_only
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
