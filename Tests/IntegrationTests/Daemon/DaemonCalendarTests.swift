import Foundation
import TestSupport
import Testing

/// Calendar jobs and time windows in the real daemon with its real store: one real-time smoke
/// test (an elapse a few seconds ahead), and a job held outside its window.
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct DaemonCalendarTests {
  @Test("a calendar job runs once at its elapse; a job outside its window does not run")
  func calendarJobRunsAndWindowHolds() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }

    var utc = Calendar(identifier: .gregorian)
    utc.timeZone = TimeZone(identifier: "UTC")!
    // Whole seconds, far enough ahead for the daemon to start and schedule the job first.
    let elapse = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 15).rounded(.down))
    let time = utc.dateComponents([.hour, .minute, .second], from: elapse)
    let expression = String(
      format: "*-*-* %02d:%02d:%02d UTC", time.hour!, time.minute!, time.second!)
    // A window three days from today (UTC): outside it now in every time zone.
    let names = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    let day = names[utc.component(.weekday, from: elapse.addingTimeInterval(3 * 86_400)) - 1]
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: "dev.e2e.calendar", script: "date +%s.%N >> \(workspace.file("calendar"))",
        schedule: "calendar = \"\(expression)\"")
        + daemonShellJob(
          id: "dev.e2e.window", script: "echo ran >> \(workspace.file("window"))",
          schedule: "every = \"1h\"", extra: "window = \"\(day) 10:00-11:00\""))

    _ = try harness.startDaemon()
    let pending = try await harness.waitForTask("dev.e2e.calendar", "scheduled") {
      $0.state == "pending"
    }
    // Seen before its run (a test run that keeps this process busy may look only after it:
    // then the checks below, of the run and the next elapse, still hold).
    if pending.lastRunStartedAt == nil {
      #expect(pending.nextRunDate == elapse, "\(harness.describe())")
    }

    let ran = try await daemonEventually(
      "the calendar job's run", timeout: .seconds(40), describe: harness.describe()
    ) { workspace.lines(of: "calendar").first.flatMap(Double.init) }
    #expect(ran >= elapse.timeIntervalSince1970, "ran at \(ran), before its elapse \(elapse)")
    let after = try await harness.waitForTask("dev.e2e.calendar", "its run recorded") {
      $0.lastResult == "success" && $0.state == "pending"
    }
    #expect(after.nextRunDate == elapse.addingTimeInterval(86_400), "\(harness.describe())")
    #expect(workspace.lines(of: "calendar").count == 1)

    // Due since the daemon started, but held by its window the whole time.
    let held = try #require(try await harness.status().task("dev.e2e.window"))
    #expect(held.predicateKinds == ["waitingForWindow"], "\(harness.describe())")
    #expect(held.lastRunStartedAt == nil)
    #expect(workspace.lines(of: "window").isEmpty)
    let text = try await harness.cli("status", "--config", workspace.configPath)
    #expect(text.stdout.contains("window opens "), "\(text)")
  }
}
