import Foundation

/// Counts the system calls of an idle `backgrounder status --watch [--json]` (network monitor
/// and power probe): `strace -f` attached after its first line plus a 10 s settle (startup,
/// thread-pool reaping and IPv6 duplicate address detection excluded) for `seconds`, broken
/// down per thread (by thread name). The call a thread is blocked in when strace attaches is
/// counted only if it returns within the window (a wakeup); otherwise it is no syscall made.
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
    let names = threadNames(pid)
    let trace = "/tmp/bgbench-strace-\(getpid()).txt"
    defer { unlink(trace) }
    _ = try? shell(
      ["-s", "INT", "\(seconds)", "strace", "-f", "-o", trace, "-p", "\(pid)"],
      executable: "/usr/bin/timeout")
    let text = (try? String(contentsOfFile: trace, encoding: .utf8)) ?? ""
    var perThread: [String: [String: Int]] = [:]
    for (tid, call) in countedCalls(in: text) {
      let thread = names[tid] ?? "tid \(tid)"
      perThread[thread, default: [:]][call, default: 0] += 1
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

  /// (TID, syscall name) for every call started in the window, plus each attach-time call
  /// that returned in it. strace prints the attach-time call first for each thread, as
  /// `<unfinished ...>`, `<detached ...>` or `restart_syscall(<... resuming ...>`.
  static func countedCalls(in text: String) -> [(String, String)] {
    var seen = Set<String>()
    var blockedAtAttach = Set<String>()
    var calls: [(String, String)] = []
    for line in text.split(separator: "\n") {
      let fields = line.split(separator: " ", maxSplits: 1)
      guard fields.count == 2, !fields[1].hasPrefix("+++"), !fields[1].hasPrefix("---") else {
        continue
      }
      let (tid, rest) = (String(fields[0]), fields[1])
      let first = seen.insert(tid).inserted
      if first && (rest.hasSuffix("<unfinished ...>") || rest.hasSuffix("<detached ...>")) {
        blockedAtAttach.insert(tid)
        continue
      }
      if rest.hasPrefix("<...") {
        // `<... NAME resumed>`: counted at its start, unless it is the attach-time call.
        guard blockedAtAttach.remove(tid) != nil else { continue }
        let name = rest.dropFirst(5).split(separator: " ").first.map(String.init) ?? "?"
        calls.append((tid, name))
        continue
      }
      blockedAtAttach.remove(tid)
      guard let call = rest.split(separator: "(").first else { continue }
      calls.append((tid, String(call)))
    }
    return calls
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
