#!/usr/bin/env python3
"""A minimal OTLP/HTTP receiver for Tests/telemetry/run.sh: decodes every POST to /v1/traces
and /v1/metrics with the official opentelemetry-proto package and appends one JSON line per
span to SPANS, one per metric data point to METRICS, and one per request (path and header
names) to SPANS.requests. When the file CONTROL holds `redirect LOCATION` it answers every
request with a 307 to LOCATION; `unavailable SECONDS`: a 503 with `Retry-After: SECONDS`.
With RECEIVER_CERT and RECEIVER_KEY set it serves HTTPS with that certificate.

Usage: receiver.py PORT SPANS METRICS [CONTROL]
"""
import gzip
import json
import os
import ssl
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2


def value(any_value):
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(self.server.spans + ".requests", "a") as output:
            output.write(json.dumps({"path": self.path, "headers": sorted(self.headers.keys())}) + "\n")
        control = ""
        if self.server.control:
            try:
                with open(self.server.control) as f:
                    control = f.read().split()
            except FileNotFoundError:
                pass
        if control and control[0] == "redirect":
            self.send_response(307)
            self.send_header("Location", control[1])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if control and control[0] == "unavailable":
            self.send_response(503)
            self.send_header("Retry-After", control[1])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        if self.path == "/v1/metrics":
            self.metrics(body)
            return
        if self.path != "/v1/traces":
            self.send_error(404)
            return
        request = trace_service_pb2.ExportTraceServiceRequest()
        request.ParseFromString(body)
        with open(self.server.spans, "a") as output:
            for resource_spans in request.resource_spans:
                resource = {a.key: value(a.value) for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        output.write(json.dumps({
                            "name": span.name,
                            "start": span.start_time_unix_nano,
                            "end": span.end_time_unix_nano,
                            "status": span.status.code,
                            "attributes": {a.key: value(a.value) for a in span.attributes},
                            "resource": resource,
                            "authorization": self.headers.get("authorization"),
                            "contentType": self.headers.get("Content-Type"),
                        }) + "\n")
        self.respond(trace_service_pb2.ExportTraceServiceResponse())

    def metrics(self, body):
        request = metrics_service_pb2.ExportMetricsServiceRequest()
        request.ParseFromString(body)
        with open(self.server.metrics, "a") as output:
            for resource_metrics in request.resource_metrics:
                resource = {a.key: value(a.value) for a in resource_metrics.resource.attributes}
                for scope_metrics in resource_metrics.scope_metrics:
                    for metric in scope_metrics.metrics:
                        kind = metric.WhichOneof("data")
                        data = getattr(metric, kind)
                        for point in data.data_points:
                            output.write(json.dumps({
                                "name": metric.name,
                                "description": metric.description,
                                "kind": kind,
                                "monotonic": kind == "sum" and data.is_monotonic,
                                "value": getattr(point, point.WhichOneof("value")),
                                "attributes": {a.key: value(a.value) for a in point.attributes},
                                "resource": resource,
                                "authorization": self.headers.get("authorization"),
                            }) + "\n")
        self.respond(metrics_service_pb2.ExportMetricsServiceResponse())

    def respond(self, message):
        response = message.SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(response)))
        self.end_headers()
        self.wfile.write(response)

    def log_message(self, *args):
        pass


def main():
    server = HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.spans = sys.argv[2]
    server.metrics = sys.argv[3]
    server.control = sys.argv[4] if len(sys.argv) > 4 else None
    if os.environ.get("RECEIVER_CERT"):  # TLS, with this certificate and key
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(os.environ["RECEIVER_CERT"], os.environ["RECEIVER_KEY"])
        server.socket = context.wrap_socket(server.socket, server_side=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
