import Foundation
import Locking
import Testing

@testable import BackgrounderCLI

/// `status --watch --json` keeps the daemon, tasks and health sections between lines and reads
/// them again only when they can have changed: the store file, a time passing, a task change
/// from the daemon, the daemon's socket.
@Suite struct WatchSectionsTests {
  /// A private directory with no store and no daemon socket in it yet.
  private final class Directory {
    let path: String
    var storePath: String { path + "/state.sqlite" }
    var socketPath: String { path + "/run/control.sock" }

    init() throws {
      path = NSTemporaryDirectory() + "bg-watch-sections-\(UUID().uuidString)"
      try FileManager.default.createDirectory(
        atPath: path + "/run", withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func printer() -> StatusPrinter {
      StatusPrinter(
        json: true, watch: true, tasks: TaskSection(storePath: storePath),
        health: HealthSection(daemonProblems: nil, queryFailure: nil),
        daemon: DaemonSection(socketPath: socketPath))
    }
  }

  /// A clock the test moves; starts `offset` seconds from now.
  private final class TestClock: Sendable {
    private let time: Lock<Date>
    init(offset: TimeInterval) { time = Lock(Date().addingTimeInterval(offset)) }
    var now: Date { time.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { time.withLock { $0.addTimeInterval(seconds) } }
  }

  @Test func anUnchangedStoreAndAbsentDaemonAreReadOnce() throws {
    let directory = try Directory()
    #expect(FileManager.default.createFile(atPath: directory.storePath, contents: Data()))
    let clock = TestClock(offset: 10)
    var sections = WatchSections(printer: directory.printer()) { clock.now }
    let first = sections.sections()
    #expect(first.tasks == [] && !first.daemon.running && first.health.healthy)
    for _ in 0..<20 {
      clock.advance(60)
      #expect(sections.sections() == first)
    }
    #expect(sections.storeReads == 1)
    #expect(sections.daemonRequests == 1)
  }

  @Test func aStoreFileThatChangedIsReadAgainForTheNextLine() throws {
    let directory = try Directory()
    let clock = TestClock(offset: 10)
    var sections = WatchSections(printer: directory.printer()) { clock.now }
    #expect(sections.sections().tasks == [])  // no store yet: no tasks
    try Data("not a database, but longer than a header would be".utf8).write(
      to: URL(fileURLWithPath: directory.storePath))
    let broken = sections.sections()
    #expect(broken.tasks == nil && !broken.health.healthy)
    #expect(sections.storeReads == 2)
    // A store that cannot be read is tried again every line, as before.
    _ = sections.sections()
    #expect(sections.storeReads == 3)
    try FileManager.default.removeItem(atPath: directory.storePath)
    #expect(FileManager.default.createFile(atPath: directory.storePath, contents: Data()))
    #expect(sections.sections().tasks == [])
    _ = sections.sections()
    #expect(sections.storeReads == 4)
  }

  @Test func aStoreChangedWithinTheSettleTimeIsReadEveryLineUntilItIsOlder() throws {
    let directory = try Directory()
    #expect(FileManager.default.createFile(atPath: directory.storePath, contents: Data()))
    // The clock reads now: the file's change is as recent as a write that could hide in the
    // same tick of the file system's clock.
    let clock = TestClock(offset: 0)
    var sections = WatchSections(printer: directory.printer()) { clock.now }
    for _ in 0..<3 { _ = sections.sections() }
    #expect(sections.storeReads == 3)
    clock.advance(FileFingerprint.settleTime + 1)
    for _ in 0..<3 { _ = sections.sections() }
    #expect(sections.storeReads == 4)
  }

  @Test func aTaskChangeFromTheDaemonReadsTheStoreAndAsksTheDaemonAgain() throws {
    let directory = try Directory()
    let clock = TestClock(offset: 10)
    var sections = WatchSections(printer: directory.printer()) { clock.now }
    _ = sections.sections()
    sections.taskChanged()
    _ = sections.sections()
    _ = sections.sections()
    #expect(sections.storeReads == 2)
    #expect(sections.daemonRequests == 2)
  }

  @Test func aSocketPathThatAppearsIsAskedAndAFailingOneEveryLine() throws {
    let directory = try Directory()
    let clock = TestClock(offset: 10)
    var sections = WatchSections(printer: directory.printer()) { clock.now }
    #expect(!sections.sections().daemon.running)
    // Not a socket: the daemon section says why, and is asked again on each line.
    #expect(FileManager.default.createFile(atPath: directory.socketPath, contents: Data()))
    let refused = sections.sections()
    #expect(refused.daemon.error != nil, "\(refused.daemon)")
    _ = sections.sections()
    #expect(sections.daemonRequests == 3)
    try FileManager.default.removeItem(atPath: directory.socketPath)
    let gone = sections.sections()
    #expect(!gone.daemon.running && gone.daemon.error == nil)
    _ = sections.sections()
    #expect(sections.daemonRequests == 4)
  }
}
