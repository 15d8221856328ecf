import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The real daemon's control socket under a low descriptor limit: watchers that come and go
/// leave nothing behind (issue 25: each used to hold a descriptor until the next task change,
/// until the daemon ran out, spun in its accept loop and failed every verb).
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct DaemonControlSocketTests {
  @Test("1,000 watchers opened and closed under ulimit -n 256: descriptors back to baseline")
  func watchersThatComeAndGoLeaveNothingBehind() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let job = "dev.e2e.tick"
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: job, script: "echo run >> \(workspace.file("ticks"))", schedule: "every = \"1h\""))
    let daemon = try DaemonChild(
      [
        "/bin/sh", "-c", "ulimit -n 256 && exec \"$0\" run --config \"$1\"", harness.binary,
        workspace.configPath,
      ], outputPath: workspace.file("daemon.log"))
    defer { daemon.terminate() }
    _ = try await harness.waitForTask(job, "the first run") { $0.lastResult == "success" }
    let baseline = Self.descriptors(of: daemon.pid)

    // Blocking socket calls, on a thread of their own rather than the tests' pool.
    let socketPath = workspace.socketPath
    try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
      Thread {
        done.resume(
          with: Result {
            for _ in 0..<20 {
              var watchers: [Int32] = []
              defer { for fd in watchers { close(fd) } }
              for _ in 0..<50 { watchers.append(try Self.watch(socketPath)) }
            }
          })
      }.start()
    }
    try await daemonEventually("descriptors back to \(baseline)", describe: daemon.output) {
      Self.descriptors(of: daemon.pid) <= baseline ? true : nil
    }
    let cpuBefore = Self.cpuTicks(of: daemon.pid)
    try await Task.sleep(for: .seconds(1))
    #expect(Self.cpuTicks(of: daemon.pid) - cpuBefore < 20, "the daemon does not spin")

    let trigger = try await harness.cli("trigger", job, "--config", workspace.configPath)
    #expect(trigger.status == 0, "\(trigger)")
    try await daemonEventually("the triggered run", describe: daemon.output) {
      workspace.lines(of: "ticks").count == 2 ? true : nil
    }
    #expect(try await harness.status().task(job) != nil)
  }

  /// Connects, asks to watch, reads the acknowledgement; returns the open connection.
  private static func watch(_ path: String) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard fd >= 0, connected == 0 else {
      if fd >= 0 { close(fd) }
      throw DaemonHarnessError("connect \(path): errno \(errno)")
    }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let request = Array("{\"watch\":{}}\n".utf8)
    _ = request.withUnsafeBytes { bytes in
      retryingInterrupts { send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }
    var reply = [UInt8](repeating: 0, count: 256)
    let count = retryingInterrupts { recv(fd, &reply, reply.count, 0) }
    guard count > 0, String(decoding: reply[..<count], as: UTF8.self).contains("watching") else {
      close(fd)
      throw DaemonHarnessError("no watch acknowledgement (\(count) bytes, errno \(errno))")
    }
    return fd
  }

  private static func descriptors(of pid: Int32) -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
  }

  /// utime + stime of `pid`, in clock ticks.
  private static func cpuTicks(of pid: Int32) -> Int {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return 0 }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
  }
}
