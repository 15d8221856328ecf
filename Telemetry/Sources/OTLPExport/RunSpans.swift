import OTel
import Tracing

/// A given instant, for spans of runs that already ended.
struct RecordedInstant: TracerInstant {
  var nanosecondsSinceEpoch: UInt64

  static func < (lhs: Self, rhs: Self) -> Bool {
    lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch
  }
}

/// Turns the outbox's runs into finished spans of `tracer` (one span per run, with its own
/// start and end): `backgrounder.run` spans with the job, attempt, outcome, reason, conditions
/// and waited time as attributes.
enum RunSpans {
  static func record(_ batch: ExportBatch, with tracer: some Tracer) {
    for run in batch.runs {
      let span = tracer.startSpan(
        "backgrounder.run", context: .topLevel, ofKind: .internal,
        at: RecordedInstant(nanosecondsSinceEpoch: run.start))
      span.attributes.set("backgrounder.job", value: .string(run.job))
      span.attributes.set("backgrounder.attempt", value: .int64(Int64(run.attempt)))
      span.attributes.set("backgrounder.outcome", value: .string(run.outcome))
      if let reason = run.reason {
        span.attributes.set("backgrounder.reason", value: .string(reason))
      }
      span.attributes.set("backgrounder.conditions", value: .stringArray(run.conditions))
      if let waited = run.waitedSeconds {
        span.attributes.set("backgrounder.waited_seconds", value: .double(waited))
      }
      span.attributes.set("backgrounder.telemetry.dropped", value: .int64(Int64(batch.dropped)))
      if run.outcome == "success" {
        span.setStatus(SpanStatus(code: .ok))
      } else {
        span.setStatus(SpanStatus(code: .error, message: run.reason ?? run.outcome))
      }
      span.end(at: RecordedInstant(nanosecondsSinceEpoch: max(run.end, run.start)))
    }
  }
}
