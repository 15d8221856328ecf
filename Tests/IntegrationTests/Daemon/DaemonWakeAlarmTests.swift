import Foundation
import TestSupport
import Testing

/// `wake-system = true`: the real daemon's `CLOCK_REALTIME_ALARM` timerfd, read through
/// `/proc/PID/fdinfo`, is armed for the next run of the `wake-system` jobs and re-armed when
/// that changes; without `CAP_WAKE_ALARM` (dropped with `setpriv`) `doctor` and the daemon say
/// why the jobs cannot wake the machine, and the daemon goes on.
@Suite(
  .blockingIO,
  .serialized,
  .enabled(if: geteuid() == 0, "needs CAP_WAKE_ALARM (root)"),
  .timeLimit(.minutes(2)))
struct DaemonWakeAlarmTests {
  private static func job(_ id: String, delay: String, wake: Bool) -> String {
    daemonShellJob(
      id: id, script: "true", schedule: "once = true\ndelay = \"\(delay)\"",
      extra: wake ? "wake-system = true" : "")
  }

  /// The seconds left on the daemon's alarm timerfd (`clockid: 8`); nil without one.
  private static func alarmSecondsLeft(pid: Int32) -> Int? {
    let directory = "/proc/\(pid)/fdinfo"
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    for name in names {
      guard let info = try? String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8),
        info.split(separator: "\n").contains("clockid: 8"),
        let line = info.split(separator: "\n").first(where: { $0.hasPrefix("it_value:") })
      else { continue }
      // it_value: (3599, 999817540)
      let seconds = line.drop { $0 != "(" }.dropFirst().prefix { $0 != "," }
      return Int(seconds.trimmingCharacters(in: .whitespaces))
    }
    return nil
  }

  @Test func theAlarmIsArmedForTheNextWakeJobAndReArmedWhenItChanges() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    try workspace.writeConfig(
      jobs: Self.job("dev.e2e.wake", delay: "1h", wake: true)
        + Self.job("dev.e2e.sooner", delay: "10m", wake: false))
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let daemon = try harness.startDaemon()
    let armed = try await daemonEventually(
      "the alarm for the wake job", describe: harness.describe()
    ) {
      Self.alarmSecondsLeft(pid: daemon.pid).flatMap { $0 > 0 ? $0 : nil }
    }
    #expect((3000...3600).contains(armed), "the wake job's run in 1h, not the other's: \(armed)")
    let status = try await harness.status().raw
    #expect(status.contains("\"wakeAlarms\":\"available\""), "\(status)")

    try workspace.writeConfig(
      jobs: Self.job("dev.e2e.wake", delay: "3h", wake: true)
        + Self.job("dev.e2e.sooner", delay: "10m", wake: false))
    kill(daemon.pid, SIGHUP)
    let rearmed = try await daemonEventually("the alarm re-armed", describe: harness.describe()) {
      Self.alarmSecondsLeft(pid: daemon.pid).flatMap { $0 > 3600 ? $0 : nil }
    }
    #expect((10_000...10_800).contains(rearmed), "the changed job's run in 3h: \(rearmed)")

    try workspace.writeConfig(
      jobs: Self.job("dev.e2e.wake", delay: "3h", wake: false)
        + Self.job("dev.e2e.sooner", delay: "10m", wake: false))
    kill(daemon.pid, SIGHUP)
    try await daemonEventually("the alarm timer closed", describe: harness.describe()) {
      Self.alarmSecondsLeft(pid: daemon.pid) == nil ? true : nil
    }
  }

  @Test func withoutTheCapabilityDoctorAndTheDaemonSaySo() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    try workspace.writeConfig(jobs: Self.job("dev.e2e.wake", delay: "1h", wake: true))
    let dropped = ["/usr/bin/setpriv", "--inh-caps=-all", "--bounding-set=-wake_alarm"]
    func doctor(_ wrapper: [String]) async throws -> String {
      let child = try DaemonChild(
        wrapper + [try DaemonBinary.path(), "doctor", "--config", workspace.configPath],
        outputPath: workspace.file("doctor.out"), errorPath: workspace.file("doctor.err"))
      _ = await child.waitForExit(timeout: .seconds(30))
      return child.output + child.errorOutput
    }
    let refused = try await doctor(dropped)
    #expect(
      refused.contains("job dev.e2e.wake: wake-system: cannot wake the machine")
        && refused.contains("CAP_WAKE_ALARM"), "\(refused)")
    let allowed = try await doctor([])
    #expect(allowed.contains("wake-system jobs can wake the machine"), "\(allowed)")

    let harness = try DaemonHarness(workspace: workspace, daemonWrapper: dropped)
    defer { harness.cleanUp() }
    let daemon = try harness.startDaemon()
    try await daemonEventually("the refusal in the log", describe: harness.describe()) {
      daemon.output.contains("wake-system jobs cannot wake the machine") ? true : nil
    }
    #expect(Self.alarmSecondsLeft(pid: daemon.pid) == nil, "no alarm timer")
    let status = try await harness.status().raw
    #expect(status.contains("\"wakeAlarms\":\"unavailable\""), "\(status)")
    #expect(status.contains("CAP_WAKE_ALARM"), "\(status)")
    let text = try await harness.cli("status", "--config", workspace.configPath).stdout
    #expect(text.contains("  wake alarms: unavailable: "), "\(text)")
  }
}
