import Foundation

/// The fields of `/proc/PID/stat` containment needs to recognise a process.
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
    guard let text = try? String(contentsOfFile: "\(procRoot)/\(pid)/stat", encoding: .utf8)
    else { return nil }
    return parse(text)
  }

  /// Parses a stat line. The command name (field 2) is in parentheses and may itself contain
  /// spaces and parentheses, so the fields are counted from the last `)`.
  static func parse(_ line: String) -> ProcStat? {
    guard let open = line.firstIndex(of: "("), let close = line.lastIndex(of: ")"),
      let pid = pid_t(line[..<open].trimmingCharacters(in: .whitespaces))
    else { return nil }
    let fields = line[line.index(after: close)...].split(separator: " ")
    // fields[0] is field 3 (state); field N is fields[N - 3].
    guard fields.count >= 20, let state = fields[0].first, let parent = pid_t(fields[1]),
      let group = pid_t(fields[2]), let session = pid_t(fields[3]),
      let start = UInt64(fields[19])
    else { return nil }
    return ProcStat(
      pid: pid, state: state, parent: parent, processGroup: group, session: session,
      startTime: start)
  }

  /// Every process whose stat can be read.
  static func all(procRoot: String = "/proc") -> [ProcStat] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: procRoot)) ?? []
    return names.compactMap { pid_t($0) }.compactMap { read(pid: $0, procRoot: procRoot) }
  }

  /// This boot's id (`/proc/sys/kernel/random/boot_id`); start times compare only within a boot.
  static func bootID(procRoot: String = "/proc") -> String {
    let text = try? String(
      contentsOfFile: "\(procRoot)/sys/kernel/random/boot_id", encoding: .utf8)
    return text?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
  }
}
