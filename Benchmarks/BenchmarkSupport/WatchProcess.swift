import Foundation
import Synchronization

/// A `backgrounder status --watch [--json]` child in a network namespace (or any other `ip`
/// command); a reader thread stamps each output line with CLOCK_MONOTONIC the moment it arrives.
public final class WatchProcess: Sendable {
  /// One line of the child's stdout.
  public struct Line: Sendable {
    /// When the line reached this process (CLOCK_MONOTONIC).
    public var arrivedNanoseconds: UInt64
    /// The line without its newline.
    public var text: String
  }

  private let process: Process
  private let lines = Mutex<[Line]>([])

  /// When the child was started (CLOCK_MONOTONIC).
  public let startedNanoseconds: UInt64

  /// `ip netns exec NAMESPACE EXECUTABLE status --watch [--json]`, with `environment` added.
  public convenience init(
    executable: String, namespace: String, json: Bool = true, environment: [String: String] = [:]
  ) throws {
    try self.init(
      arguments: ["netns", "exec", namespace, executable, "status", "--watch"]
        + (json ? ["--json"] : []), environment: environment)
  }

  /// Runs `/usr/sbin/ip ARGUMENTS` (`ip netns exec` and `ip -n` keep the process id), with
  /// `environment` added to this process's.
  public init(arguments: [String], environment: [String: String] = [:]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
    process.arguments = arguments
    if !environment.isEmpty {
      process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
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

  /// The child's process id.
  public var processIdentifier: Int32 { process.processIdentifier }

  /// How many lines arrived so far.
  public var count: Int { lines.withLock { $0.count } }

  /// Every line so far.
  public var allLines: [Line] { lines.withLock { $0 } }

  /// CPU time of each of the process's threads called `name` (all threads for `nil`) so far,
  /// nanoseconds (`/proc/PID/task/*/schedstat`), by thread id. Pass it to
  /// ``cpuNanoseconds(since:ofThreadsNamed:)``: a plain sum of the threads would go down when a
  /// thread exits (a libdispatch worker idle for a while), and a difference of two sums would
  /// underflow.
  public func cpuSample(ofThreadsNamed name: String? = nil) -> [String: UInt64] {
    let tasks = "/proc/\(processIdentifier)/task"
    let threads = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
    var sample: [String: UInt64] = [:]
    for thread in threads {
      if let name {
        let comm = try? String(contentsOfFile: "\(tasks)/\(thread)/comm", encoding: .utf8)
        guard comm?.trimmingCharacters(in: .whitespacesAndNewlines) == name else { continue }
      }
      let text = (try? String(contentsOfFile: "\(tasks)/\(thread)/schedstat", encoding: .utf8))
      if let nanoseconds = text?.split(separator: " ").first.flatMap({ UInt64($0) }) {
        sample[thread] = nanoseconds
      }
    }
    return sample
  }

  /// CPU time since `sample` (``cpuSample(ofThreadsNamed:)``) of the threads alive now, a
  /// thread started since counted whole, nanoseconds. A thread that exited since takes what it
  /// used after the sample with it (it is not counted).
  public func cpuNanoseconds(since sample: [String: UInt64], ofThreadsNamed name: String? = nil)
    -> UInt64
  {
    cpuSample(ofThreadsNamed: name).reduce(0) { total, thread in
      total + (thread.value - min(thread.value, sample[thread.key] ?? 0))
    }
  }

  /// Resident set size (`VmRSS`), kilobytes.
  public var residentKilobytes: Int {
    let text = (try? String(contentsOfFile: "/proc/\(processIdentifier)/status", encoding: .utf8))
    let line = text?.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
    return line.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
  }

  /// Waits (checking every 100 µs) for a line after index `from` containing `needle`.
  public func waitForLine(after from: Int, containing needle: String, timeoutSeconds: Double = 5)
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

  /// Ends the child (SIGTERM) and waits for it.
  public func stop() {
    process.terminate()
    process.waitUntilExit()
  }
}

/// CLOCK_MONOTONIC in nanoseconds.
public func monotonicNanoseconds() -> UInt64 {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}
