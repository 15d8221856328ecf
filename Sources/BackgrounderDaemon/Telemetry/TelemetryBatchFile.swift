import Backgrounder
import Foundation
import SystemCalls

/// The exporter's input: one JSON file, readable by the daemon's user only, with the
/// collector's address, its headers (secrets, hence a file and not the command line), the drop
/// count, the daemon's metrics in Prometheus text format and the runs.
enum TelemetryBatchFile {
  private struct Header: Encodable {
    var endpoint: String
    var headers: [String: String]
    var caFile: String?
    var retryAfterFile: String?
    var dropped: Int
    var metrics: String?
  }

  /// The file's contents for `batch`.
  static func contents(
    _ batch: TelemetryBatch, settings: TelemetrySettings, metrics: String?,
    retryAfterFile: String? = nil
  ) throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    var header = try encoder.encode(
      Header(
        endpoint: settings.endpoint, headers: settings.allHeaders, caFile: settings.caFile,
        retryAfterFile: retryAfterFile, dropped: batch.dropped,
        metrics: metrics))
    // The stored rows are JSON objects already: spliced in, not decoded and encoded again.
    header.removeLast()  // "}"
    header.append(contentsOf: Array(",\"runs\":[".utf8))
    header.append(contentsOf: Array(batch.payloads.joined(separator: ",").utf8))
    header.append(contentsOf: Array("]}".utf8))
    return header
  }

  /// Writes the file for `batch` and `metrics` at `path` (mode 0600, created anew: a file or
  /// symlink planted there is removed, never followed).
  static func write(
    _ batch: TelemetryBatch, settings: TelemetrySettings, metrics: String?, to path: String,
    retryAfterFile: String? = nil
  ) throws {
    let data = try contents(
      batch, settings: settings, metrics: metrics, retryAfterFile: retryAfterFile)
    unlink(path)
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw SystemCallError.current("open", path: path) }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    try handle.write(contentsOf: data)
    try handle.close()
  }
}
