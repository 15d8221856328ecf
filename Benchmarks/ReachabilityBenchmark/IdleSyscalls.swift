import Foundation

/// Counts the system calls of an idle `backgrounder status --watch`: `strace -f` attached after
/// its first line plus a 10 s settle (startup, thread-pool reaping and IPv6 duplicate address
/// detection excluded) for `seconds`, broken down per thread (by thread name).
enum IdleSyscalls {
  static func count(backgrounder: String, namespace: String, seconds: Int) throws -> String {
    let watch = try WatchProcess(executable: backgrounder, namespace: namespace)
    defer { watch.stop() }
    guard watch.waitForLine(after: 0, containing: "\"network\"", timeoutSeconds: 30) != nil else {
      throw BenchmarkError("no initial status line")
    }
    sleep(10)
    let pid = watch.processIdentifier
    let names = threadNames(pid)
    let trace = "/tmp/bgbench-strace-\(getpid()).txt"
    defer { unlink(trace) }
    _ = try? shell(
      ["-s", "INT", "\(seconds)", "strace", "-f", "-o", trace, "-p", "\(pid)"],
      executable: "/usr/bin/timeout")
    let text = (try? String(contentsOfFile: trace, encoding: .utf8)) ?? ""
    var perThread: [String: [String: Int]] = [:]
    for line in text.split(separator: "\n") {
      let fields = line.split(separator: " ", maxSplits: 1)
      guard fields.count == 2, !fields[1].hasPrefix("<..."), !fields[1].hasPrefix("+++"),
        !fields[1].hasPrefix("---"), let call = fields[1].split(separator: "(").first
      else { continue }
      let thread = names[String(fields[0])] ?? "tid \(fields[0])"
      perThread[thread, default: [:]][String(call), default: 0] += 1
    }
    let total = perThread.values.flatMap(\.values).reduce(0, +)
    var report =
      "idle `status --watch` over \(seconds) s after a 10 s settle: \(total) syscalls (strace -f -p PID)"
    for (thread, calls) in perThread.sorted(by: { $0.key < $1.key }) {
      let detail = calls.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
      report += "\n  \(thread): \(calls.values.reduce(0, +)) (\(detail.joined(separator: ", ")))"
    }
    let quiet = names.values.filter { name in perThread[name] == nil }.sorted()
    report += "\n  threads without any syscall: \(quiet.joined(separator: ", "))"
    return report
  }

  /// "TID" -> "comm (TID)" for every thread of `pid`.
  private static func threadNames(_ pid: Int32) -> [String: String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    var names: [String: String] = [:]
    for tid in tasks {
      let comm =
        (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
      names[tid] = "\(comm) (\(tid))"
    }
    return names
  }
}
