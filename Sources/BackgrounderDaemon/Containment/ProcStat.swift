import Foundation
import SystemCalls

/// The fields of `/proc/PID/stat` containment needs to recognise a process.
///
/// Read with `readSmallFile` (plain `open`/`read`) and parsed as bytes: a run's end scans every
/// process's stat (``ProcessSweep``), and through Foundation (`String(contentsOfFile:)`, then
/// `split`) that scan was 40 % of the daemon's CPU while 1,000 short jobs ran.
struct ProcStat: Sendable, Equatable {
  var pid: pid_t
  /// One letter: `R`, `S`, `D`, `Z` (zombie), …
  var state: Character
  var parent: pid_t
  var processGroup: pid_t
  var session: pid_t
  /// Field 22: clock ticks after boot when the process started. With the boot id it tells a
  /// process from a later one that reuses its pid.
  var startTime: UInt64

  /// The stat line of `pid` under `procRoot`, or nil when there is no such process.
  static func read(pid: pid_t, procRoot: String = "/proc") -> ProcStat? {
    guard let line = try? readSmallFile("\(procRoot)/\(pid)/stat", limit: 1024) else {
      return nil
    }
    return line.withUnsafeBufferPointer { parse($0) }
  }

  /// Parses a stat line. The command name (field 2) is in parentheses and may itself contain
  /// spaces and parentheses, so the fields are counted from the last `)`.
  static func parse(_ line: String) -> ProcStat? {
    Array(line.utf8).withUnsafeBufferPointer { parse($0) }
  }

  /// Parses a stat line's bytes (see the `String` variant).
  static func parse(_ line: UnsafeBufferPointer<UInt8>) -> ProcStat? {
    guard let open = line.firstIndex(of: UInt8(ascii: "(")),
      let close = line.lastIndex(of: UInt8(ascii: ")")), open < close,
      let pid = integer(line[..<open].trimmingSpaces).flatMap(pid_t.init(exactly:)), pid > 0
    else { return nil }
    // The fields after the command name, from field 3 (state): field N is fields[N - 3].
    var fields: [Slice<UnsafeBufferPointer<UInt8>>] = []
    fields.reserveCapacity(20)
    var start = close + 1
    for index in (close + 1)..<line.endIndex where fields.count < 20 {
      if line[index] == UInt8(ascii: " ") || line[index] == UInt8(ascii: "\n") {
        if index > start { fields.append(line[start..<index]) }
        start = index + 1
      }
    }
    if fields.count < 20, start < line.endIndex { fields.append(line[start...]) }
    guard fields.count >= 20, fields[0].count == 1,
      let parent = integer(fields[1]).flatMap(pid_t.init(exactly:)),
      let group = integer(fields[2]).flatMap(pid_t.init(exactly:)),
      let session = integer(fields[3]).flatMap(pid_t.init(exactly:)),
      let start = integer(fields[19]).flatMap(UInt64.init(exactly:))
    else { return nil }
    return ProcStat(
      pid: pid, state: Character(Unicode.Scalar(fields[0][fields[0].startIndex])),
      parent: parent, processGroup: group, session: session, startTime: start)
  }

  /// Every process whose stat can be read.
  static func all(procRoot: String = "/proc") -> [ProcStat] {
    guard let directory = opendir(procRoot) else { return [] }
    defer { closedir(directory) }
    var pids: [pid_t] = []
    while let entry = readdir(directory) {
      let pid = withUnsafeBytes(of: entry.pointee.d_name) { name -> Int64? in
        let bytes = name.prefix { $0 != 0 }
        return bytes.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
          ? integer(bytes) : nil
      }
      if let pid = pid.flatMap(pid_t.init(exactly:)) { pids.append(pid) }
    }
    return pids.compactMap { read(pid: $0, procRoot: procRoot) }
  }

  /// This boot's id (`/proc/sys/kernel/random/boot_id`); start times compare only within a boot.
  static func bootID(procRoot: String = "/proc") -> String {
    if procRoot == "/proc" { return currentBootID }
    return readBootID(procRoot: procRoot)
  }

  /// The boot id under `/proc`, read once: it does not change while the process lives.
  private static let currentBootID = readBootID(procRoot: "/proc")

  private static func readBootID(procRoot: String) -> String {
    let text = try? String(
      contentsOfFile: "\(procRoot)/sys/kernel/random/boot_id", encoding: .utf8)
    return text?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
  }

  /// The decimal integer (optionally negative) that `digits` spells, or nil.
  private static func integer<Bytes: Collection<UInt8>>(_ digits: Bytes) -> Int64? {
    var value: Int64 = 0
    var negative = false
    var any = false
    for (offset, byte) in digits.enumerated() {
      if offset == 0, byte == UInt8(ascii: "-") {
        negative = true
        continue
      }
      guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
      let (times, timesOverflow) = value.multipliedReportingOverflow(by: 10)
      let (sum, sumOverflow) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
      guard !timesOverflow, !sumOverflow else { return nil }
      value = sum
      any = true
    }
    guard any else { return nil }
    return negative ? -value : value
  }
}

extension Slice where Base == UnsafeBufferPointer<UInt8> {
  /// Without leading and trailing spaces.
  fileprivate var trimmingSpaces: Slice {
    let first = firstIndex { $0 != UInt8(ascii: " ") } ?? endIndex
    let last = self[first...].lastIndex { $0 != UInt8(ascii: " ") }.map { $0 + 1 } ?? first
    return self[first..<last]
  }
}
