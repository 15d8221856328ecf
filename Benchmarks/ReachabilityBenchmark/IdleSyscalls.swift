import Foundation

/// Counts the system calls of an idle `backgrounder status --watch` with `strace -f -c`,
/// attached after its first line (startup excluded) and detached after `seconds`.
enum IdleSyscalls {
  static func count(backgrounder: String, namespace: String, seconds: Int) throws -> String {
    let watch = try WatchProcess(executable: backgrounder, namespace: namespace)
    defer { watch.stop() }
    guard watch.waitForLine(after: 0, containing: "\"network\"", timeoutSeconds: 30) != nil else {
      throw BenchmarkError("no initial status line")
    }
    usleep(500_000)
    let summary = "/tmp/bgbench-strace-\(getpid()).txt"
    defer { unlink(summary) }
    _ = try? shell(
      ["-s", "INT", "\(seconds)", "strace", "-f", "-c", "-o", summary, "-p", "\(watch.processIdentifier)"],
      executable: "/usr/bin/timeout")
    let text = (try? String(contentsOfFile: summary, encoding: .utf8)) ?? ""
    let total = text.split(separator: "\n").last { $0.contains("total") }
    let calls = total.map { line in
      line.split(separator: " ", omittingEmptySubsequences: true).dropLast().last.map(String.init) ?? "?"
    } ?? "0"
    return "idle `status --watch` over \(seconds) s: \(calls) syscalls (strace -f -c -p PID)\n\(text)"
  }
}
