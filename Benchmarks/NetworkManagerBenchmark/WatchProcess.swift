import Foundation
import Synchronization

/// A `backgrounder status --watch [--json]` child in the namespace; a reader thread stamps each
/// output line with CLOCK_MONOTONIC the moment it arrives.
final class WatchProcess: Sendable {
  struct Line: Sendable {
    var arrivedNanoseconds: UInt64
    var text: String
  }

  private let process: Process
  private let lines = Mutex<[Line]>([])

  init(executable: String, namespace: String, json: Bool = true, environment: [String: String])
    throws
  {
    let process = Process()
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
    process.arguments =
      ["netns", "exec", namespace, executable, "status", "--watch"] + (json ? ["--json"] : [])
    let pipe = Pipe()
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
