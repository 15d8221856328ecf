import Foundation
import Testing

@testable import BackgrounderDaemon

/// The `stop-signal` and `stop-timeout` keys of a `[[job]]`: the signals a job may stop with,
/// the timeout's range, and each mistake named with the job id and the key.
@Suite struct StopSignalConfigTests {
  private func parse(_ jobKeys: String) throws(ConfigurationError) -> JobDefinition? {
    try parseJob(id: "dev.example.restic", jobKeys)
  }

  @Test(
    "a stop signal is read with or without SIG, in any case",
    arguments: [
      ("SIGINT", SIGINT), ("int", SIGINT), ("SIGTERM", SIGTERM), ("hup", SIGHUP),
      ("SigQuit", SIGQUIT), ("USR1", SIGUSR1), ("sigusr2", SIGUSR2),
    ])
  func readsTheSignal(name: String, signal: Int32) throws {
    let job = try #require(try parse("stop-signal = \"\(name)\""))
    #expect(job.stopSignal == signal)
  }

  @Test func defaultsAreLeftToTheDaemon() throws {
    let job = try #require(try parse(""))
    #expect(job.stopSignal == nil && job.stopTimeout == nil)
    let timed = try #require(try parse("stop-timeout = \"30s\""))
    #expect(timed.stopTimeout == .seconds(30))
    #expect(try parse("stop-timeout = \"1s\"")?.stopTimeout == .seconds(1))
    #expect(try parse("stop-timeout = \"1h\"")?.stopTimeout == .seconds(3600))
  }

  @Test(
    "a signal that cannot stop a job gracefully is refused, naming the job and the key",
    arguments: ["SIGKILL", "kill", "SIGSTOP", "SIGFOO", "9", ""])
  func refusesTheSignal(name: String) {
    do {
      _ = try parse("stop-signal = \"\(name)\"")
      Issue.record("stop-signal = \"\(name)\" was accepted")
    } catch {
      #expect(error.key == "job[0].stop-signal", "\(error)")
      #expect(error.message.contains("dev.example.restic"), "\(error)")
      #expect(error.message.contains("SIGINT"), "\(error)")
      #expect(error.line == 5, "\(error)")
    }
  }

  @Test(
    "a stop timeout out of 1 s to 1 h is refused, naming the job and the key",
    arguments: ["500ms", "0s", "61m", "2h"])
  func refusesTheTimeout(text: String) {
    do {
      _ = try parse("stop-timeout = \"\(text)\"")
      Issue.record("stop-timeout = \"\(text)\" was accepted")
    } catch {
      #expect(error.key == "job[0].stop-timeout", "\(error)")
      #expect(error.message.contains("dev.example.restic"), "\(error)")
      #expect(error.message.contains("1s to 1h"), "\(error)")
    }
  }

  @Test func theRecordSaysHowTheRunEnded() {
    #expect(
      StopSignal.record(signal: SIGINT, after: .milliseconds(20), killed: false)
        == "stopped with SIGINT")
    #expect(
      StopSignal.record(signal: SIGINT, after: .milliseconds(30_040), killed: true)
        == "killed with SIGKILL after 30 s")
    #expect(
      StopSignal.record(signal: SIGTERM, after: .milliseconds(1_040), killed: true)
        == "killed with SIGKILL after 1 s")
    #expect(
      StopSignal.record(signal: SIGTERM, after: .milliseconds(520), killed: true)
        == "killed with SIGKILL after 0.5 s")
  }
}
