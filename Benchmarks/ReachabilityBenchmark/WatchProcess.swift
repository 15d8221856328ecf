import Foundation
import Synchronization

/// A `backgrounder status --watch [--json]` child in the namespace (or any other command); a
/// reader thread stamps each output line with CLOCK_MONOTONIC the moment it arrives.
final class WatchProcess: Sendable {
  struct Line: Sendable {
    var arrivedNanoseconds: UInt64
    var text: String
  }

  private let process: Process
  private let lines = Mutex<[Line]>([])

  /// When the child was started (CLOCK_MONOTONIC).
  let startedNanoseconds: UInt64

  convenience init(executable: String, namespace: String, json: Bool = true) throws {
    try self.init(
      arguments: ["netns", "exec", namespace, executable, "status", "--watch"]
        + (json ? ["--json"] : []))
  }

  /// Runs `/usr/sbin/ip ARGUMENTS` (`ip netns exec` and `ip -n` keep the process id).
  init(arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
    process.arguments = arguments
    let pipe = Pipe()
    startedNanoseconds = monotonicNanoseconds()
    process.standardOutput = pipe
    try process.run()
    self.process = process
    let handle = pipe.fileHandleForReading
    let thread = Thread { [self] in
      var pending: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 65_536)
      while true {
        let count = read(handle.fileDescriptor, &buffer, buffer.count)
        if count <= 0 { return }
        let now = monotonicNanoseconds()
        pending += buffer[0..<count]
        while let newline = pending.firstIndex(of: 10) {
          let text = String(decoding: pending[..<newline], as: UTF8.self)
          pending.removeSubrange(...newline)
          self.lines.withLock { $0.append(Line(arrivedNanoseconds: now, text: text)) }
        }
      }
    }
    thread.start()
  }

  var processIdentifier: Int32 { process.processIdentifier }

  var count: Int { lines.withLock { $0.count } }

  /// Every line so far.
  var allLines: [Line] { lines.withLock { $0 } }

  /// CPU time of all the process's threads so far (`/proc/PID/task/*/schedstat`), nanoseconds.
  var cpuNanoseconds: UInt64 { cpuNanoseconds(ofThreadsNamed: nil) }

  /// CPU time so far of the threads called `name` (all threads for `nil`), nanoseconds.
  func cpuNanoseconds(ofThreadsNamed name: String?) -> UInt64 {
    let tasks = "/proc/\(processIdentifier)/task"
    let threads = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
    return threads.reduce(0) { total, thread in
      if let name {
        let comm = try? String(contentsOfFile: "\(tasks)/\(thread)/comm", encoding: .utf8)
        guard comm?.trimmingCharacters(in: .whitespacesAndNewlines) == name else { return total }
      }
      let text = (try? String(contentsOfFile: "\(tasks)/\(thread)/schedstat", encoding: .utf8))
      return total + (text?.split(separator: " ").first.flatMap { UInt64($0) } ?? 0)
    }
  }

  /// Resident set size (`VmRSS`), kilobytes.
  var residentKilobytes: Int {
    let text = (try? String(contentsOfFile: "/proc/\(processIdentifier)/status", encoding: .utf8))
    let line = text?.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
    return line.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
  }

  /// Waits (checking every 100 µs) for a line after index `from` containing `needle`.
  func waitForLine(after from: Int, containing needle: String, timeoutSeconds: Double = 5)
    -> (index: Int, line: Line)?
  {
    let deadline = monotonicNanoseconds() + UInt64(timeoutSeconds * 1e9)
    while monotonicNanoseconds() < deadline {
      let found = lines.withLock { lines -> (Int, Line)? in
        guard lines.count > from else { return nil }
        return lines[from...].enumerated().first { $0.element.text.contains(needle) }
          .map { (from + $0.offset, $0.element) }
      }
      if let found { return found }
      usleep(100)
    }
    return nil
  }

  func stop() {
    process.terminate()
    process.waitUntilExit()
  }
}

func monotonicNanoseconds() -> UInt64 {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}
