/// An OTLP attribute value (`opentelemetry.proto.common.v1.AnyValue`).
public enum AttributeValue: Equatable, Sendable {
  case string(String)
  case int(Int64)
  case double(Double)
  case strings([String])

  func write(_ writer: inout ProtobufWriter) {
    switch self {
    case .string(let value): writer.string(1, value)
    case .int(let value): writer.int(3, value)
    case .double(let value): writer.double(4, value)
    case .strings(let values):
      writer.message(5) { array in  // ArrayValue
        for value in values { array.message(1) { $0.string(1, value) } }
      }
    }
  }
}

/// Writes `KeyValue` fields (`key` 1, `value` 2) as field `field` of the current message.
func writeAttributes(
  _ attributes: [(String, AttributeValue)], field: Int, to writer: inout ProtobufWriter
) {
  for (key, value) in attributes {
    writer.message(field) { pair in
      pair.string(1, key)
      pair.message(2) { value.write(&$0) }
    }
  }
}

/// The two OTLP/HTTP request bodies the exporter sends, in protobuf
/// (`opentelemetry/proto/collector/{trace,metrics}/v1`): one resource (service `backgrounder`
/// and the host name), one instrumentation scope.
public enum OTLPRequests {
  /// The instrumentation scope's name.
  public static let scope = "backgrounder"

  /// `service.name` and `host.name`.
  public static func resource(hostName: String) -> [(String, AttributeValue)] {
    [("service.name", .string("backgrounder")), ("host.name", .string(hostName))]
  }

  /// One finished span.
  public struct Span: Sendable {
    public var traceID: [UInt8]
    public var spanID: [UInt8]
    public var name: String
    public var start: UInt64
    public var end: UInt64
    public var attributes: [(String, AttributeValue)]
    /// `true`: STATUS_CODE_OK; `false`: STATUS_CODE_ERROR with `statusMessage`.
    public var ok: Bool
    public var statusMessage: String?

    public init(
      traceID: [UInt8], spanID: [UInt8], name: String, start: UInt64, end: UInt64,
      attributes: [(String, AttributeValue)], ok: Bool, statusMessage: String?
    ) {
      self.traceID = traceID
      self.spanID = spanID
      self.name = name
      self.start = start
      self.end = end
      self.attributes = attributes
      self.ok = ok
      self.statusMessage = statusMessage
    }
  }

  /// `ExportTraceServiceRequest` { resource_spans { resource, scope_spans { scope, spans } } }.
  public static func traces(_ spans: [Span], resource: [(String, AttributeValue)]) -> [UInt8] {
    var request = ProtobufWriter()
    request.message(1) { resourceSpans in
      resourceSpans.message(1) { writeAttributes(resource, field: 1, to: &$0) }
      resourceSpans.message(2) { scopeSpans in
        scopeSpans.message(1) { $0.string(1, scope) }
        for span in spans {
          scopeSpans.message(2) { message in
            message.bytes(1, span.traceID)
            message.bytes(2, span.spanID)
            message.string(5, span.name)
            message.int(6, 1)  // SPAN_KIND_INTERNAL
            message.fixed64(7, span.start)
            message.fixed64(8, span.end)
            writeAttributes(span.attributes, field: 9, to: &message)
            message.message(15) { status in
              if let text = span.statusMessage { status.string(2, text) }
              status.int(3, span.ok ? 1 : 2)  // STATUS_CODE_OK / STATUS_CODE_ERROR
            }
          }
        }
      }
    }
    return request.bytes
  }

  /// One metric and its data points.
  public struct Metric: Sendable {
    public var name: String
    public var description: String
    /// A monotonic cumulative sum; otherwise a gauge.
    public var isCounter: Bool
    public var points: [(attributes: [(String, AttributeValue)], value: Double)]

    public init(
      name: String, description: String, isCounter: Bool,
      points: [(attributes: [(String, AttributeValue)], value: Double)]
    ) {
      self.name = name
      self.description = description
      self.isCounter = isCounter
      self.points = points
    }
  }

  /// `ExportMetricsServiceRequest` { resource_metrics { resource, scope_metrics { scope,
  /// metrics } } }; every point at `time` (nanoseconds since 1970).
  public static func metrics(
    _ metrics: [Metric], time: UInt64, resource: [(String, AttributeValue)]
  ) -> [UInt8] {
    var request = ProtobufWriter()
    request.message(1) { resourceMetrics in
      resourceMetrics.message(1) { writeAttributes(resource, field: 1, to: &$0) }
      resourceMetrics.message(2) { scopeMetrics in
        scopeMetrics.message(1) { $0.string(1, scope) }
        for metric in metrics {
          scopeMetrics.message(2) { message in
            message.string(1, metric.name)
            if !metric.description.isEmpty { message.string(2, metric.description) }
            // Sum (7) or Gauge (5); both hold NumberDataPoints as field 1.
            message.message(metric.isCounter ? 7 : 5) { data in
              for point in metric.points {
                data.message(1) { number in
                  number.fixed64(3, time)
                  number.double(4, point.value)
                  writeAttributes(point.attributes, field: 7, to: &number)
                }
              }
              if metric.isCounter {
                data.int(2, 2)  // AGGREGATION_TEMPORALITY_CUMULATIVE
                data.bool(3, true)  // is_monotonic
              }
            }
          }
        }
      }
    }
    return request.bytes
  }
}
