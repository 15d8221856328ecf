import BenchmarkSupport
import Foundation

/// Counts the system calls of an idle `backgrounder status --watch [--json]` (network monitor
/// and power probe): `strace -f` attached after its first line plus a 10 s settle (startup,
/// thread-pool reaping and IPv6 duplicate address detection excluded) for `seconds`, broken
/// down per thread (by thread name); see ``IdleTrace/calls(in:)`` for what counts.
enum IdleSyscalls {
  static func count(backgrounder: String, namespace: String, seconds: Int, json: Bool) throws
    -> String
  {
    let watch = try WatchProcess(executable: backgrounder, namespace: namespace, json: json)
    defer { watch.stop() }
    let firstLine = json ? "\"network\"" : "reachable"
    guard watch.waitForLine(after: 0, containing: firstLine, timeoutSeconds: 30) != nil else {
      throw BenchmarkError("no initial status line")
    }
    sleep(10)
    let pid = watch.processIdentifier
    let names = IdleTrace.threadNames(pid)
    var perThread: [String: [String: Int]] = [:]
    for call in IdleTrace.calls(ofProcess: pid, seconds: seconds) {
      let thread = names[call.threadID] ?? "tid \(call.threadID)"
      perThread[thread, default: [:]][call.name, default: 0] += 1
    }
    let total = perThread.values.flatMap(\.values).reduce(0, +)
    var report =
      "idle `status --watch\(json ? " --json" : "")` over \(seconds) s after a 10 s settle: "
      + "\(total) syscalls (strace -f -p PID)"
    for (thread, calls) in perThread.sorted(by: { $0.key < $1.key }) {
      let detail = calls.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
      report += "\n  \(thread): \(calls.values.reduce(0, +)) (\(detail.joined(separator: ", ")))"
    }
    let quiet = names.values.filter { name in perThread[name] == nil }.sorted()
    report += "\n  threads without any syscall: \(quiet.joined(separator: ", "))"
    return report
  }
}
