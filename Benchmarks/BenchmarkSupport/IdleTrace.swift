import Foundation

/// The system calls a process makes while it should be idle, from `strace -f`.
public enum IdleTrace {
  /// One system call: the thread id that made it and the call's name.
  public struct Call: Sendable {
    public var threadID: String
    public var name: String
  }

  /// Attaches `strace -f` to `pid` for `seconds` and returns the calls made in that window.
  public static func calls(ofProcess pid: Int32, seconds: Int) -> [Call] {
    let trace = "/tmp/bgbench-strace-\(getpid())-\(pid).txt"
    defer { unlink(trace) }
    _ = try? shell(
      ["-s", "INT", "\(seconds)", "strace", "-f", "-o", trace, "-p", "\(pid)"],
      executable: "/usr/bin/timeout")
    return calls(in: (try? String(contentsOfFile: trace, encoding: .utf8)) ?? "")
  }

  /// Every call started in the window, plus each attach-time call that returned in it. strace
  /// prints the call a thread is blocked in when it attaches first, as `<unfinished ...>`,
  /// `<detached ...>` or `restart_syscall(<... resuming ...>`: such a call is counted only if it
  /// returns within the window (a wakeup); otherwise it is no call made.
  public static func calls(in text: String) -> [Call] {
    var seen = Set<String>()
    var blockedAtAttach = Set<String>()
    var calls: [Call] = []
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
        calls.append(Call(threadID: tid, name: name))
        continue
      }
      blockedAtAttach.remove(tid)
      guard let call = rest.split(separator: "(").first else { continue }
      calls.append(Call(threadID: tid, name: String(call)))
    }
    return calls
  }

  /// "TID" -> "comm (TID)" for every thread of `pid`.
  public static func threadNames(_ pid: Int32) -> [String: String] {
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
