import CSystemShims
import EventLoops
import Foundation
import Locking
import SystemPackage
import TestSupport
import Testing

@testable import BackgrounderDaemon

/// ``RunProcess``: a run's process held before its exec until released; a gate closed without
/// a byte (the daemon gone) runs nothing; what it gets is exactly what it was given.
@Suite(.timeLimit(.minutes(1))) struct RunProcessTests {
  private func marker() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("run-\(UUID().uuidString)").path
  }

  private func command(_ script: String, environment: [String: String] = [:])
    -> RunProcess.Command
  {
    RunProcess.Command(
      path: "/bin/sh", arguments: ["sh", "-c", script], environment: environment,
      workingDirectory: nil)
  }

  /// Runs `process` to its end, collecting its stdout.
  private func finish(_ process: RunProcess) async throws -> (RunProcess.Termination, String) {
    let output = Lock<[UInt8]>([])
    let end = await process.wait(on: try EventLoop.shared()) { stream, chunk in
      if stream == .standardOutput { output.withLock { $0 += chunk } }
    }
    return (end, String(decoding: output.withLock { $0 }, as: UTF8.self))
  }

  @Test("held until released, then runs its command once")
  func heldUntilReleased() async throws {
    let path = marker()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let process = try RunProcess.spawn(command("echo ran >> \(path)"))
    // Held: it has not run (it waits on its gate, before the exec).
    try await Task.sleep(for: .milliseconds(50))
    #expect(!FileManager.default.fileExists(atPath: path))
    process.release()
    let (end, _) = try await finish(process)
    #expect(end == .exited(0))
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "ran\n")
  }

  @Test("a stop before the child's setsid reaches it through its pidfd (no group yet: ESRCH)")
  func signalWithoutAGroupReachesTheLeader() async throws {
    // A child that leads no group, as a run's child is before its `setsid`: kill(-pid) fails.
    // posix_spawn without POSIX_SPAWN_SETPGROUP keeps it in this process's group (Foundation's
    // Process would give it one of its own).
    var pid: pid_t = 0
    let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("sleep"), strdup("1000"), nil]
    defer { for argument in arguments { free(argument) } }
    try #require(posix_spawn(&pid, "/bin/sleep", nil, nil, arguments, environ) == 0)
    let child = pid
    var reaped = false
    defer {
      if !reaped {
        kill(child, SIGKILL)
        waitpid(child, nil, 0)
      }
    }
    #expect(getpgid(child) != child)
    let pidfd = csystem_pidfd_open(child)
    try #require(pidfd >= 0)
    defer { close(pidfd) }
    RunProcess.signal(group: child, pidfd: pidfd, SIGKILL)
    let status = await eventually { () -> Int32? in
      var status: Int32 = 0
      return waitpid(child, &status, WNOHANG) == child ? status : nil
    }
    reaped = status != nil
    #expect(
      status.map { $0 & 0x7f } == SIGKILL,
      "the signal was lost: status \(String(describing: status))")
  }

  @Test("a gate closed without a byte (the daemon gone) runs nothing")
  func abandonedRunsNothing() async throws {
    let path = marker()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let process = try RunProcess.spawn(command("touch \(path)"))
    process.abandon()
    let (end, _) = try await finish(process)
    #expect(end == .exited(127))
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test("exactly the environment given, a session of its own, no descriptor of the daemon's")
  func whatItGets() async throws {
    // A descriptor of this process's that the child must not inherit (not close-on-exec).
    let leaked = open("/dev/null", O_RDONLY)
    defer { close(leaked) }
    let process = try RunProcess.spawn(
      command(
        "echo \"$A|$(env | wc -l)|$(ps -o sid= -p $$ | tr -d ' ')|$$\"; ls /proc/$$/fd",
        environment: ["A": "one two", "PATH": "/usr/bin:/bin"]))
    process.release()
    let (end, output) = try await finish(process)
    #expect(end == .exited(0))
    let lines = output.split(separator: "\n").map(String.init)
    let fields = try #require(lines.first).split(separator: "|").map(String.init)
    #expect(fields.count == 4)
    #expect(fields[0] == "one two")
    // A, PATH, and the PWD and SHLVL sh adds itself.
    #expect(Int(fields[1]) ?? 0 <= 4, "\(lines)")
    #expect(fields[2] == fields[3], "its own session: \(fields)")
    #expect(Set(lines.dropFirst()) == ["0", "1", "2"], "only stdio: \(lines)")
  }

  @Test("an exec that fails is reported with its errno")
  func execFailure() async throws {
    let process = try RunProcess.spawn(
      RunProcess.Command(
        path: "/nonexistent/program", arguments: ["program"], environment: [:],
        workingDirectory: nil))
    process.release()
    let (end, _) = try await finish(process)
    #expect(end == .failedToStart(.noSuchFileOrDirectory))
  }

  /// A job that writes without pause does not keep the loop: another run on the same loop
  /// still ends (with a drain to `EAGAIN` and a reader slower than `yes`, the loop never came
  /// back from its pipe).
  @Test(.timeLimit(.minutes(1)))
  func aChattyRunDoesNotHoldTheLoop() async throws {
    let loop = try EventLoop(name: "test-run-loop")
    defer { loop.stop() }
    let chatty = try RunProcess.spawn(
      RunProcess.Command(
        path: "/usr/bin/yes", arguments: ["yes", String(repeating: "y", count: 1000)],
        environment: [:], workingDirectory: nil))
    chatty.release()
    // Each chunk takes a while to handle (a busy machine, a slow log): the writer stays ahead
    // and the pipe never runs dry.
    let chattyEnd = Task {
      await chatty.wait(on: loop) { _, _ in usleep(2000) }
    }
    // Let the loop start reading it.
    try await Task.sleep(for: .milliseconds(100))
    let quick = try RunProcess.spawn(command("exit 7"))
    quick.release()
    let end = await quick.wait(on: loop) { _, _ in }
    #expect(end == .exited(7))
    chatty.stop(signal: SIGTERM, killAfter: .seconds(5), on: loop)
    #expect(await chattyEnd.value == .signaled(SIGTERM))
  }
}
