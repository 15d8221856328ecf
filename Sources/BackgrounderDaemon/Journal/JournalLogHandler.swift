import CSystemdBus
import Foundation
import Logging

/// Logs to the systemd journal through its native protocol (`sd_journal_sendv`), so that a
/// job's lines carry fields: `BACKGROUNDER_JOB` (the job id), `BACKGROUNDER_RUN` (the run id),
/// `BACKGROUNDER_ATTEMPT`, and `PRIORITY` from the level — `journalctl BACKGROUNDER_JOB=ID`
/// then shows that job's output and events and nothing else. Used only when the daemon's
/// stderr is the journal (``isStandardErrorJournal(environment:)``); otherwise the daemon
/// writes its plain stderr lines, as it does when libsystemd cannot be opened (it is opened on
/// first use, not linked).
package struct JournalLogHandler: LogHandler {
  package var metadata: Logger.Metadata = [:]
  package var logLevel: Logger.Level = .info
  private let label: String

  package init(label: String) {
    self.label = label
  }

  package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  package func log(event: LogEvent) {
    let merged = metadata.merging(event.metadata ?? [:]) { $1 }
    let fields = JournalFields.fields(
      level: event.level, message: "\(event.message)", metadata: merged, label: label)
    JournalFields.send(fields)
  }

  /// Whether stderr is connected to the journal: systemd sets `JOURNAL_STREAM` to the
  /// `device:inode` of that stream (a redirection of stderr elsewhere makes it stale).
  package static func isStandardErrorJournal(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> Bool {
    guard let value = environment["JOURNAL_STREAM"] else { return false }
    var status = stat()
    guard fstat(STDERR_FILENO, &status) == 0,
      JournalFields.matches(value, device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    else { return false }
    return csd_library_loaded() != 0
  }
}

/// The journal fields of one log record, and their sending.
enum JournalFields {
  /// Metadata keys that become journal fields of their own.
  static let fieldNames: [String: String] = [
    "job": "BACKGROUNDER_JOB", "run": "BACKGROUNDER_RUN", "attempt": "BACKGROUNDER_ATTEMPT",
  ]

  /// `MESSAGE` (the message followed by all metadata as `key=value`, as on stderr, so that
  /// `journalctl -o cat` still shows the job id),
  /// `PRIORITY` (syslog: error 3, warning 4, notice 5, info 6, debug 7), `SYSLOG_IDENTIFIER`,
  /// and the fields of ``fieldNames``.
  static func fields(
    level: Logger.Level, message: String, metadata: Logger.Metadata, label: String
  ) -> [String] {
    let rest = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    var fields = [
      "MESSAGE=" + ([message] + rest).joined(separator: " "),
      "PRIORITY=\(priority(level))",
      "SYSLOG_IDENTIFIER=backgrounder",
      "BACKGROUNDER_LOGGER=\(label)",
    ]
    for (key, name) in fieldNames.sorted(by: { $0.key < $1.key }) {
      if let value = metadata[key] { fields.append("\(name)=\(value)") }
    }
    return fields
  }

  static func priority(_ level: Logger.Level) -> Int {
    switch level {
    case .trace, .debug: 7
    case .info: 6
    case .notice: 5
    case .warning: 4
    case .error: 3
    case .critical: 2
    }
  }

  /// Whether `JOURNAL_STREAM`'s `device:inode` names the stream with `device` and `inode`.
  static func matches(_ journalStream: String, device: UInt64, inode: UInt64) -> Bool {
    let parts = journalStream.split(separator: ":")
    guard parts.count == 2, let streamDevice = UInt64(parts[0]), let streamInode = UInt64(parts[1])
    else { return false }
    return streamDevice == device && streamInode == inode
  }

  /// Sends one entry (a field's value may hold newlines: the native protocol carries them).
  static func send(_ fields: [String]) {
    var bytes: [UInt8] = []
    var ranges: [Range<Int>] = []
    for field in fields {
      let start = bytes.count
      bytes += field.utf8
      ranges.append(start..<bytes.count)
    }
    bytes.withUnsafeMutableBytes { buffer in
      guard let base = buffer.baseAddress else { return }
      let vectors = ranges.map { iovec(iov_base: base + $0.lowerBound, iov_len: $0.count) }
      _ = sd_journal_sendv(vectors, Int32(vectors.count))
    }
  }
}
