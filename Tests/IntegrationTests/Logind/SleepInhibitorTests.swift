import Backgrounder
import BackgrounderLinux
import BackgrounderTesting
import EventLoops
import Foundation
import Locking
import Logging
import ServiceLifecycle
import TestSupport
import Testing

/// `SleepInhibitor` (the Logind module) on python-dbusmock's logind on a private bus: no logind,
/// no lock and no failure; logind found absent is not asked again for a while; a lock released
/// before logind answers is released when the answer comes. And the library's runs hold the
/// locks through `LinuxConditionSources.holdingInhibitors(from:_:)`, as the daemon's command runs do
/// (`DaemonInhibitorTests`).
@Suite(
  .blockingIO,
  .serialized,
  .enabled(if: LogindMock.isAvailable, "needs dbus-daemon, dbus-send and python3-dbusmock"),
  .timeLimit(.minutes(2)))
struct SleepInhibitorTests {
  /// A library's work, registered through `holdingInhibitors`, holds a `sleep` and a
  /// `shutdown` lock in its request's mode while its worker runs, named after the application
  /// and the task, and releases them when the worker returns; `none` takes no lock. Without the
  /// wrapper the library took no lock at all.
  @Test func aLibraryRunHoldsTheLocksOfItsRequest() async throws {
    let library = try LibraryOnLogind(inhibitorWho: "photo-sync")
    defer { library.close() }
    let (sources, runtime) = (library.sources, Backgrounder(storePath: library.storePath))
    // Each run says it started, then waits until the test has read logind's list.
    let started = Lock<Set<String>>([])
    let released = Lock(false)
    try runtime.registerFallback(
      sources.holdingInhibitors { _ in
        ClosureWorker { context in
          started.withLock { _ = $0.insert(context.taskId.rawValue) }
          _ = await waitUntil { released.withLock { $0 } }
          return .success
        }
      })
    try await runtime.start()
    let held = try TaskId("dev.example.held")
    let free = try TaskId("dev.example.free")
    #expect(
      await runtime.schedule(.oneTime(.init(taskId: held, inhibitPolicy: .block))) == .scheduled)
    #expect(
      await runtime.schedule(.oneTime(.init(taskId: free, inhibitPolicy: .none))) == .scheduled)
    #expect(await waitUntil { started.withLock { $0.count == 2 } }, "both runs to start")
    // Both of the held run's locks, asked for one after the other.
    let mine = try await daemonEventually("the held run's two locks") {
      let mine = try library.locks(of: held)
      return mine.count == 2 ? mine : nil
    }
    #expect(
      mine.contains { $0.contains("\"sleep\"") } && mine.contains { $0.contains("\"shutdown\"") })
    #expect(
      mine.allSatisfy { $0.contains("\"photo-sync\"") && $0.contains("\"block\"") }, "\(mine)")
    #expect(try library.locks(of: free).isEmpty, "inhibit none takes no lock")
    released.withLock { $0 = true }
    try await daemonEventually("the locks to go") {
      try library.locks(of: held).isEmpty ? true : nil
    }
    await runtime.shutdown()
  }

  /// `from: .confirmedStart` (as the daemon registers its command runs): a run that gives its
  /// start back — declined, or its conditions changed — asks logind for nothing, and a run
  /// holds its locks from the moment `confirmStart()` says yes. Before, every run asked for
  /// the locks when its worker started, and the declined one dropped them at once.
  @Test func aRunThatGivesItsStartBackAsksLogindForNothing() async throws {
    let library = try LibraryOnLogind()
    defer { library.close() }
    let (sources, runtime) = (library.sources, Backgrounder(storePath: library.storePath))
    let declined = try TaskId("dev.example.declined")
    let held = try TaskId("dev.example.held")
    // The declined run ends unstarted; the other confirms, says so, and waits for the test.
    let confirmed = Lock(false)
    let released = Lock(false)
    try runtime.registerFallback(
      sources.holdingInhibitors(from: .confirmedStart) { _ in
        ClosureWorker { context in
          if context.taskId == declined {
            context.declineStart(reason: "a condition of its own")
            return .retry(reason: "declined")
          }
          #expect(context.confirmStart())
          confirmed.withLock { $0 = true }
          _ = await waitUntil { released.withLock { $0 } }
          return .success
        }
      })
    try await runtime.start()
    #expect(await runtime.schedule(.oneTime(.init(taskId: declined))) == .scheduled)
    let store = try TaskStoreReader(path: library.storePath)
    #expect(
      await waitUntil {
        (try? store.task(declined)?.recentRuns.first?.outcome == "deferred") ?? false
      }, "the declined run's record")
    #expect(await runtime.schedule(.oneTime(.init(taskId: held))) == .scheduled)
    #expect(await waitUntil { confirmed.withLock { $0 } }, "the held run to confirm")
    _ = try await daemonEventually("the held run's two locks") {
      try library.locks(of: held).count == 2 ? true : nil
    }
    // Only the held run's two: the declined run's worker asked for none.
    #expect(try library.logind.inhibitCalls() == 2)
    #expect(try library.locks(of: declined).isEmpty)
    released.withLock { $0 = true }
    try await daemonEventually("the locks to go") {
      try library.locks(of: held).isEmpty ? true : nil
    }
    await runtime.shutdown()
  }

  /// `followSystemSleep`: on `PrepareForSleep(true)` a library run under a `delay` lock is
  /// stopped (its worker cancelled with `systemSuspending`) while a `block` run goes on, and on
  /// `false` the stopped run starts again, in the same attempt. Without the follower a library
  /// run went on into the suspend.
  @Test func aLibraryRunUnderADelayLockIsStoppedForSleepAndRunsAgainAfter() async throws {
    let library = try LibraryOnLogind()
    defer { library.close() }
    let (sources, logind) = (library.sources, library.logind)
    let runtime = Backgrounder(storePath: library.storePath)
    // Each start's attempt, and each stop's reason, by task; a run waits until released.
    let starts = Lock<[String: [Int]]>([:])
    let stops = Lock<[String: StopReason]>([:])
    let released = Lock(false)
    try runtime.registerFallback(
      sources.holdingInhibitors { _ in
        ClosureWorker { context in
          let id = context.taskId.rawValue
          starts.withLock { $0[id, default: []].append(context.attempt) }
          _ = await waitUntil { released.withLock { $0 } || Task.isCancelled }
          guard Task.isCancelled else { return .success }
          stops.withLock { $0[id] = context.stopReason }
          return .retry(reason: "stopped")
        }
      })
    let follower = try sources.followSystemSleep(of: runtime)
    defer { follower.stop() }
    try await runtime.start()
    let delay = try TaskId("dev.example.delay")
    let block = try TaskId("dev.example.block")
    #expect(await runtime.schedule(.oneTime(.init(taskId: delay))) == .scheduled)
    #expect(
      await runtime.schedule(.oneTime(.init(taskId: block, inhibitPolicy: .block))) == .scheduled)
    try await daemonEventually("both runs and their locks") {
      let list = try logind.inhibitors()
      return starts.withLock { $0.count == 2 } && list.contains("\"running dev.example.delay\"")
        && list.contains("\"running dev.example.block\"") ? true : nil
    }
    // The watch subscribes on a thread of its own: the signal is sent until it is seen.
    let reason = try await daemonEventually("the delay run to be stopped for sleep") {
      try logind.emit("PrepareForSleep", true)
      return stops.withLock { $0[delay.rawValue] }
    }
    #expect(reason == .systemSuspending)
    try await daemonEventually("the delay run's lock to go") {
      try logind.inhibitors().contains("dev.example.delay") ? nil : true
    }
    #expect(try logind.inhibitors().contains("\"running dev.example.block\""), "block goes on")
    #expect(stops.withLock { $0[block.rawValue] } == nil)
    #expect(starts.withLock { $0[delay.rawValue] } == [0], "nothing starts while asleep")

    try logind.emit("PrepareForSleep", false)
    try await daemonEventually("the delay run to start again") {
      starts.withLock { $0[delay.rawValue]?.count == 2 ? true : nil }
    }
    #expect(starts.withLock { $0[delay.rawValue] } == [0, 0], "the same attempt again")
    released.withLock { $0 = true }
    await runtime.shutdown()
  }

  /// The follower is a `Service`: in a `ServiceGroup` it follows until graceful shutdown, then
  /// stops and closes its bus connection. Before, `stop()` stopped serving the connection and
  /// kept it open for as long as the follower lived.
  @Test func aFollowerInAServiceGroupClosesItsConnectionAtShutdown() async throws {
    let library = try LibraryOnLogind()
    defer { library.close() }
    let before = try library.connections()
    let follower = try library.sources.followSystemSleep(
      of: Backgrounder(storePath: library.storePath))
    let group = ServiceGroup(
      configuration: .init(services: [follower], logger: Logger(label: "test.follower")))
    let running = Task { try await group.run() }
    try await daemonEventually("the follower's connection") {
      try library.connections() == before + 1 ? true : nil
    }
    await group.triggerGracefulShutdown()
    try await running.value
    try await daemonEventually("the follower's connection to close") {
      try library.connections() == before ? true : nil
    }
    withExtendedLifetime(follower) {}
  }

  /// A follower stopped while its connection is still being made (on a thread of its own)
  /// closes that connection when it arrives. Before, the connection arrived after the stop and
  /// was served for good: a runtime shut down was still told of every sleep.
  @Test func aFollowerStoppedBeforeItConnectedClosesTheConnectionWhenItArrives() async throws {
    let loop = try EventLoop(name: "test-sleep-follower")
    defer { loop.stop() }
    let library = try LibraryOnLogind(eventLoop: loop)
    defer { library.close() }
    let before = try library.connections()
    // The loop is held, so the stop and the connection's hand-over both wait there, in order.
    let hold = DispatchSemaphore(value: 0)
    loop.execute { hold.wait() }
    let follower = try library.sources.followSystemSleep(
      of: Backgrounder(storePath: library.storePath))
    follower.stop()
    try await daemonEventually("the follower's connection to be made") {
      try library.connections() == before + 1 ? true : nil
    }
    hold.signal()
    try await daemonEventually("the follower's connection to close") {
      try library.connections() == before ? true : nil
    }
    withExtendedLifetime(follower) {}
  }

  /// A follower let go of without `stop()` stops and closes its connection. Before, the event
  /// loop kept serving the connection, whose signal handler pointed at the freed watch: the
  /// next `PrepareForSleep` would have crashed the process.
  @Test func aFollowerLetGoOfClosesItsConnection() async throws {
    let library = try LibraryOnLogind()
    defer { library.close() }
    let before = try library.connections()
    var follower: SystemSleepFollower? = try library.sources.followSystemSleep(
      of: Backgrounder(storePath: library.storePath))
    try await daemonEventually("the follower's connection") {
      try library.connections() == before + 1 ? true : nil
    }
    withExtendedLifetime(follower) {}
    follower = nil
    try await daemonEventually("the follower's connection to close") {
      try library.connections() == before ? true : nil
    }
    try library.logind.emit("PrepareForSleep", true)
  }

  /// A run that pauses (`onConditionLost = .pause`) holds no lock while paused and takes its
  /// locks again when it resumes (issue #36: "while paused the run holds no sleep inhibitor");
  /// the daemon's command runs hold theirs through the same wrapper.
  @Test func aPausedRunHoldsNoLockUntilItResumes() async throws {
    let library = try LibraryOnLogind()
    defer { library.close() }
    let network = FakeNetworkSource(.unmetered)
    let runtime = Backgrounder(configuration: .init(storePath: library.storePath, network: network))
    let sources = library.sources
    let told = Lock<[PauseChange]>([])
    // The run waits for this (no time limit of its own: a run that ended would release its
    // locks and pass the pause check without the release on a pause).
    let (release, released) = AsyncStream<Void>.makeStream()
    try runtime.registerFallback(
      sources.holdingInhibitors { _ in
        ClosureWorker { context in
          context.handlePauses { change in told.withLock { $0.append(change) } }
          for await _ in release { break }
          return .success
        }
      })
    try await runtime.start()
    let task = try TaskId("dev.example.pausing")
    var constraints = WorkConstraints(networkRequired: .unmetered)
    constraints.onConditionLost = .pause(max: .seconds(3600))
    #expect(
      await runtime.schedule(.oneTime(.init(taskId: task, constraints: constraints)))
        == .scheduled)
    func locks() throws -> Int { try library.locks(of: task).count }
    try await daemonEventually("the run's two locks") { try locks() == 2 ? true : nil }

    network.set(.metered)
    try await daemonEventually("the paused run's locks to go") {
      try locks() == 0 && told.withLock({ $0 }) == [.pause(.networkMetered)] ? true : nil
    }
    network.set(.unmetered)
    try await daemonEventually("the locks again after the resume") {
      try locks() == 2 && told.withLock({ $0.count }) == 2 ? true : nil
    }
    #expect(told.withLock { $0 } == [.pause(.networkMetered), .resume])
    released.finish()
    try await daemonEventually("the locks to go at the end") { try locks() == 0 ? true : nil }
    await runtime.shutdown()
  }

  @Test func noLogindMeansNoLockAndTheRunGoesOn() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    let inhibitor = SleepInhibitor(address: bus.address, logger: Logger(label: "test.inhibitor"))
    let lock = try #require(inhibitor.hold(jobID: "a.b", mode: .delay))
    let availability = try await daemonEventually("logind's absence to be noted") {
      inhibitor.availability == .unknown ? nil : inhibitor.availability
    }
    guard case .absent = availability else {
      Issue.record("expected absent, got \(availability)")
      return
    }
    #expect(!lock.isHeld)
    lock.release()
    #expect(inhibitor.hold(jobID: "a.b", mode: .none) == nil)
  }

  /// logind found absent: runs ask nothing for `absentRetry` (a lock settled at once, no bus
  /// connection attempted, even once logind is there), then ask again and get a lock.
  @Test func afterLogindWasAbsentRunsAskAgainOnlyAfterTheRetryTime() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    let clock = Lock(ContinuousClock.now)
    let inhibitor = SleepInhibitor(
      address: bus.address, absentRetry: .seconds(60), logger: Logger(label: "test.inhibitor"),
      now: { clock.withLock { $0 } })
    let first = try #require(inhibitor.hold(jobID: "a.first", mode: .delay))
    _ = try await daemonEventually("logind's absence to be noted") {
      first.isAnswered ? true : nil
    }
    guard case .absent = inhibitor.availability else {
      Issue.record("expected absent, got \(inhibitor.availability)")
      return
    }
    first.release()
    let logind = try LogindMock(bus: bus)
    defer { logind.stop() }
    clock.withLock { $0 = $0 + .seconds(59) }
    let skipped = try #require(inhibitor.hold(jobID: "a.skipped", mode: .delay))
    #expect(skipped.isAnswered, "no request: settled before hold returned")
    #expect(!skipped.isHeld)
    skipped.release()
    clock.withLock { $0 = $0 + .seconds(2) }
    let asked = try #require(inhibitor.hold(jobID: "a.asked", mode: .delay))
    _ = try await daemonEventually("the lock after the retry time") {
      asked.isHeld ? true : nil
    }
    #expect(inhibitor.availability == .available)
    #expect(try logind.inhibitors().contains("running a.asked"))
    #expect(try !logind.inhibitors().contains("a.skipped"))
    asked.release()
  }

  @Test func aLockReleasedBeforeLogindAnswersIsReleasedOnArrival() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    let logind = try LogindMock(bus: bus)
    defer { logind.stop() }
    let inhibitor = SleepInhibitor(address: bus.address, logger: Logger(label: "test.inhibitor"))
    let lock = try #require(inhibitor.hold(jobID: "a.quick", mode: .delay))
    lock.release()
    _ = try await daemonEventually("logind to answer") {
      inhibitor.availability == .unknown ? nil : true
    }
    #expect(inhibitor.availability == .available)
    #expect(!lock.isHeld)
    try await daemonEventually("no lock to be left") {
      try logind.inhibitors().contains("a.quick") ? nil : true
    }
    let kept = try #require(inhibitor.hold(jobID: "a.kept", mode: .delay))
    try await daemonEventually("the lock") {
      try logind.inhibitors().contains("\"running a.kept\"") && kept.isHeld ? true : nil
    }
    kept.release()
    try await daemonEventually("the lock to go") {
      try logind.inhibitors().contains("a.kept") ? nil : true
    }
  }
}

/// python-dbusmock's logind on a private bus, Linux sources that find it there (no other source
/// is run), and a directory for a runtime's store; ``close()`` when done.
private final class LibraryOnLogind {
  let bus: PrivateBus
  let logind: LogindMock
  let sources: LinuxConditionSources
  let storePath: String
  private let directory = NSTemporaryDirectory() + "bglogind-\(UInt32.random(in: 0...UInt32.max))"

  init(inhibitorWho: String = "backgrounder", eventLoop: EventLoop? = nil) throws {
    bus = try PrivateBus()
    do {
      logind = try LogindMock(bus: bus)
    } catch {
      bus.close()
      throw error
    }
    sources = LinuxConditionSources(
      options: .init(
        sysfsRoot: "/nonexistent", watchesUserIdle: false, logindBusAddress: bus.address,
        inhibitorWho: inhibitorWho),
      eventLoop: eventLoop, logger: Logger(label: "test.inhibitor"))
    storePath = directory + "/state.sqlite"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
  }

  /// logind's locks of `task`'s runs, one entry each (dbus-send prints a `struct {` per lock).
  func locks(of task: TaskId) throws -> [String] {
    try logind.inhibitors().components(separatedBy: "struct {").filter {
      $0.contains("\"running \(task)\"")
    }
  }

  /// How many connections the bus has (``PrivateBus/connections()``).
  func connections() throws -> Int { try bus.connections() }

  func close() {
    try? FileManager.default.removeItem(atPath: directory)
    logind.stop()
    bus.close()
  }
}
