import BackgrounderDaemon
import Foundation
import Testing

@Suite struct SystemdNotifierTests {
  @Test func sendsDatagramsToTheNotifySocket() throws {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("notify-\(UUID().uuidString).sock").path
    let receiver = try DatagramReceiver(path: path)
    let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path])
    #expect(notifier.notify("READY=1\nSTATUS=2 jobs") == nil)
    #expect(try receiver.receive() == "READY=1\nSTATUS=2 jobs")
  }

  @Test func supportsAbstractSocketNames() throws {
    let name = "@backgrounder-test-\(UUID().uuidString)"
    let receiver = try DatagramReceiver(path: name)
    #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": name]).notify("STOPPING=1") == nil)
    #expect(try receiver.receive() == "STOPPING=1")
  }

  @Test func isSilentOutsideSystemd() {
    let notifier = SystemdNotifier(environment: [:])
    #expect(notifier.socketPath == nil)
    #expect(notifier.notify("READY=1") == nil)
  }

  @Test func watchdogIntervalIsHalfOfWatchdogUsecForThisProcess() {
    let mine = SystemdNotifier(
      environment: ["NOTIFY_SOCKET": "/x", "WATCHDOG_USEC": "20000000", "WATCHDOG_PID": "42"],
      processID: 42)
    #expect(mine.watchdogInterval == .seconds(10))
    let other = SystemdNotifier(
      environment: ["NOTIFY_SOCKET": "/x", "WATCHDOG_USEC": "20000000", "WATCHDOG_PID": "7"],
      processID: 42)
    #expect(other.watchdogInterval == nil)
    #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "junk"]).watchdogInterval == nil)
  }
}
