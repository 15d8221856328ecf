import Backgrounder
import Foundation
import PowerSource
import Reachability

/// Encodes `status --watch --json` lines: the same bytes as ``Output/json(_:)`` of a
/// ``StatusDocument``, cheaply. The network section (new on almost every line) is written by
/// ``JSONLineWriter``; the sections that rarely change (power, tasks, health, daemon) go through
/// `JSONEncoder` only when their value differs from the previous line's. One buffer is reused.
struct StatusLineEncoder {
  private var writer = JSONLineWriter()
  private var timestamps = NetworkTimestamp.Formatter()
  private var daemon = EncodedSection<DaemonSection.Report>()
  private var health = EncodedSection<HealthReport>()
  private var power = EncodedSection<PowerStatus>()
  private var tasks = EncodedSection<[TaskStatus]>()

  /// `microseconds` as an RFC 3339 timestamp (see ``NetworkTimestamp``).
  mutating func timestamp(_ microseconds: Int64) -> String {
    var bytes: [UInt8] = []
    timestamps.append(microseconds: microseconds, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The line for this status, newline included.
  mutating func line(
    observedAt microseconds: Int64, network: NetworkStatus, power: PowerStatus,
    tasks: [TaskStatus]?, health: HealthReport, daemon: DaemonSection.Report
  ) throws -> [UInt8] {
    writer.reset()
    writer.beginObject()
    writer.key("daemon")
    writer.raw(try self.daemon.encoded(daemon))
    writer.key("health")
    writer.raw(try self.health.encoded(health))
    writer.key("network")
    writer.network(network)
    writer.key("observedAt")
    var timestamps = self.timestamps
    writer.unescapedString { timestamps.append(microseconds: microseconds, to: &$0) }
    self.timestamps = timestamps
    writer.key("power")
    writer.raw(try self.power.encoded(power))
    writer.key("tasks")
    if let tasks { writer.raw(try self.tasks.encoded(tasks)) } else { writer.null() }
    writer.endObject()
    writer.newline()
    return writer.bytes
  }
}

/// One section's JSON, re-encoded only when its value changed.
private struct EncodedSection<Value: Encodable & Equatable> {
  private var value: Value?
  private var bytes: [UInt8] = []

  mutating func encoded(_ newValue: Value) throws -> [UInt8] {
    if value != newValue {
      bytes = Array(try Output.jsonData(newValue))
      value = newValue
    }
    return bytes
  }
}
