import Backgrounder
import BackgrounderTesting
import Foundation
import Locking
import Logging
import Testing

@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct LifecycleTests {
  @Test(
    "task ids follow the reference rules",
    arguments: [
      ("com.example.sync", true), ("a.b", true), ("A-1_b.c-2", true),
      (String(repeating: "a", count: 64) + "." + String(repeating: "b", count: 63), true),
      ("", false), ("nodot", false), (".leading", false), ("trailing.", false),
      ("double..dot", false), ("space here.x", false), ("ümlaut.x", false),
      (String(repeating: "a", count: 65) + "." + String(repeating: "b", count: 63), false),
    ])
  func taskIdValidation(text: String, valid: Bool) {
    #expect(((try? TaskId(text)) != nil) == valid)
  }

  @Test("task id errors name the problem")
  func taskIdErrors() {
    #expect(throws: TaskIdError.missingDot) { try TaskId("sync") }
    #expect(throws: TaskIdError.emptyLabel) { try TaskId("a..b") }
    #expect(throws: TaskIdError.invalidCharacter("/")) { try TaskId("a/b.c") }
    #expect(throws: TaskIdError.tooLong(length: 129)) {
      try TaskId(String(repeating: "a", count: 127) + ".b")
    }
  }

  @Test("the store is opened on a thread of its own, not on the concurrency pool")
  func storeOpensOffThePool() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let threads = ThreadNames()
    var configuration = Backgrounder.Configuration(
      storePath: directory.appendingPathComponent("store.sqlite").path, clock: ManualClock(),
      network: FakeNetworkSource(.unmetered), power: FakePowerSource(.externalPower),
      durability: .normal)
    configuration.dispatchesWork = false
    configuration.logger = Logger(label: "test") { _ in threads }
    let backgrounder = Backgrounder(configuration: configuration)
    try await backgrounder.start()
    await backgrounder.shutdown()
    // "backgrounder started" is logged by the code that opened the store, on its thread.
    #expect(threads.names(of: "backgrounder started") == ["bg-store-open"])
  }

  @Test("registering twice or after start is an error")
  func registration() async throws {
    let job = id("test.lifecycle.job")
    let h = try await Harness.start(workers: [job: RecordingWorker()])
    #expect(throws: RegistrationError.alreadyStarted) {
      try h.backgrounder.register(id("test.lifecycle.late")) { RecordingWorker() }
    }
    let fresh = Backgrounder(storePath: h.directory.appendingPathComponent("other.sqlite").path)
    try fresh.register(job) { RecordingWorker() }
    #expect(throws: RegistrationError.duplicate(job)) { try fresh.register(job) { nil } }
    #expect(throws: RegistrationError.duplicate(id("test.bulk.a"))) {
      try fresh.register([id("test.bulk.a"), id("test.bulk.a")]) { _ in nil }
    }
    try fresh.register([id("test.bulk.a"), id("test.bulk.b")]) { _ in RecordingWorker() }
    #expect(fresh.registeredTaskIds() == [id("test.bulk.a"), id("test.bulk.b"), job])
  }

  @Test("schedule validates requests and honours replace / keep")
  func scheduling() async throws {
    let job = id("test.lifecycle.schedule")
    let worker = RecordingWorker()
    let h = try await Harness.start(workers: [job: worker])

    #expect(
      await h.backgrounder.schedule(WorkRequest.OneTime(taskId: id("test.unknown.x")))
        == .rejected(.notRegistered(id("test.unknown.x"))))
    let big = WorkInput(["blob": .bytes(Data(count: 8000))])
    if case .rejected(let reason) = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, input: big)), reason.code == .inputTooLarge
    {
      #expect(reason.bytes ?? 0 > WorkInput.maximumSerializedSize)
    } else {
      Issue.record("oversized input was not rejected")
    }
    #expect(
      await h.backgrounder.schedule(WorkRequest.Periodic(taskId: job, interval: .seconds(59)))
        == .rejected(.intervalTooShort(minimum: .seconds(60))))
    #expect(
      await h.backgrounder.schedule(
        WorkRequest.Periodic(taskId: job, interval: .seconds(60), flexWindow: .seconds(60)))
        == .rejected(.invalidFlexWindow))
    #expect(
      await h.backgrounder.schedule(
        WorkRequest.OneTime(taskId: job, backoff: .linear(maxAttempts: 31)))
        == .rejected(.invalidBackoff("maxAttempts 31 is outside 1...30")))

    let later = WorkRequest.OneTime(
      taskId: job, input: ["n": .int(1)], initialDelay: .seconds(600))
    #expect(await h.backgrounder.schedule(later) == .scheduled)
    #expect(await h.backgrounder.schedule(later, policy: .keep) == .keptExisting)
    var replacement = later
    replacement.input = ["n": .int(2)]
    replacement.initialDelay = .seconds(60)
    #expect(await h.backgrounder.schedule(replacement, policy: .replace) == .scheduled)
    await h.waitFor(job) { $0 == .scheduleReplaced }
    #expect(h.task(job)?.nextRunHint == h.at(60))
    let task = try #require(h.task(job))
    #expect(task.pendingPredicates == [.waitingForEarliestBeginDate(at: h.at(60))])
    try h.driver.setInitialDelayMet(job)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.contexts.first?.input.int("n") == 2)
  }

  @Test("cancel removes work; cancelAll clears everything")
  func cancelling() async throws {
    let a = id("test.cancel.a")
    let b = id("test.cancel.b")
    let running = BlockingWorker()
    let h = try await Harness.start(workers: [a: RecordingWorker(), b: running])

    #expect(await h.backgrounder.cancel(a) == .noSuchTask)
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: a, initialDelay: .seconds(600)))
    #expect(await h.backgrounder.cancel(a) == .cancelled(pendingCleared: true))
    #expect(try await h.status(a) == nil)
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: b))
    await h.waitFor(b) { $0.isWorkStarted }
    await running.waitUntilInvoked()
    #expect(await h.backgrounder.cancel(b) == .cancelled(pendingCleared: false))
    await h.waitFor(b) { $0 == .cancelled(source: .user) }
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: a, initialDelay: .seconds(600)))
    #expect(await h.backgrounder.cancelAll() == 1)
    #expect(h.backgrounder.scheduled().isEmpty)
  }

  @Test("guarantees report a minimum periodic interval of at most one minute")
  func guarantees() {
    let backgrounder = Backgrounder(storePath: "/nonexistent/store.sqlite")
    let guarantees = backgrounder.guarantees()
    #expect(guarantees.minimumPeriodicInterval <= .seconds(60))
    #expect(guarantees.survivesProcessDeath && guarantees.survivesForceQuit)
    #expect(guarantees.honoursPowerConstraints && guarantees.honoursNetworkConstraints)
    #expect(guarantees.maxConcurrentTasks == 4)
  }

  @Test("runNow bypasses backoff and constraints; a second call while running starts nothing")
  func runNow() async throws {
    let job = id("test.lifecycle.runnow")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker], network: .offline)

    #expect(h.backgrounder.runNow(job) == .noSuchTask)
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(
        taskId: job, constraints: .init(networkRequired: .any), initialDelay: .seconds(3600)))
    #expect(h.backgrounder.runNow(job) == .triggered)
    await h.waitFor(job) { $0.isWorkStarted }
    #expect(h.backgrounder.runNow(job) == .alreadyRunning)
    worker.release()
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
  }

  @Test("shutdown cancels running workers and records a retry that resumes after restart")
  func shutdownAndRestart() async throws {
    let job = id("test.lifecycle.shutdown")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker])
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job))
    await h.waitFor(job) { $0.isWorkStarted }
    await worker.waitUntilInvoked()
    await h.backgrounder.shutdown()
    #expect(worker.cancelledRuns == 1)
    #expect(worker.stopReasons == [.shutdown])
    #expect(await h.waitFor(job) { $0 == .cancelled(source: .shutdown) }.count == 1)
    let stored = try #require(try TaskStoreReader(path: h.storePath).task(job))
    #expect(stored.state == .pending)
    #expect(stored.lastResult == .retry)
    #expect(stored.attempt == 0)
    #expect(await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job)) == .rejected(.shutDown))

    let again = RecordingWorker(.success)
    let h2 = try await Harness.start(
      workers: [job: again], directory: h.directory, clock: h.clock)
    await h2.waitFor(job) { $0.isWorkCompleted }
    #expect(again.attempts == [0])
  }

  @Test("ephemeral work is swept at start; other work survives")
  func ephemeralSweep() async throws {
    let keep = id("test.sweep.keep")
    let drop = id("test.sweep.drop")
    let h = try await Harness.start(workers: [keep: RecordingWorker(), drop: RecordingWorker()])
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: keep, initialDelay: .seconds(600)))
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: drop, ephemeral: true, initialDelay: .seconds(600)))
    await h.backgrounder.shutdown()

    let h2 = try await Harness.start(
      workers: [keep: RecordingWorker(), drop: RecordingWorker()], directory: h.directory,
      clock: h.clock)
    await h2.waitFor(drop) { $0 == .skipped(reason: .ephemeralExpired) }
    #expect(h2.backgrounder.scheduled().map(\.taskId) == [keep])
    #expect(h2.task(keep)?.nextRunHint == h.at(600))
  }

  @Test("persisted work without a registered worker is kept, blocked and reported")
  func unregisteredWorkIsKept() async throws {
    let job = id("test.unregistered.job")
    let h = try await Harness.start(workers: [job: RecordingWorker()])
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job, initialDelay: .seconds(60)))
    await h.backgrounder.shutdown()

    let h2 = try await Harness.start(workers: [:], directory: h.directory, clock: h.clock)
    await h2.waitFor(job) { $0 == .skipped(reason: .notRegistered) }
    let task = try #require(h2.task(job))
    #expect(task.state == .blocked)
    #expect(task.pendingPredicates.contains(.workerNotRegistered))
    #expect(try await h2.status(job)?.pendingPredicates.contains(.workerNotRegistered) == true)
  }
}

@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct ServiceTests {
  @Test("run() starts the runtime and shuts it down when its task is cancelled")
  func serviceRun() async throws {
    let job = id("test.service.job")
    let worker = BlockingWorker()
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let clock = ManualClock()
    let backgrounder = Backgrounder(
      configuration: .init(
        storePath: directory.appendingPathComponent("store.sqlite").path, clock: clock))
    try backgrounder.register(job) { worker }
    let recorder = EventRecorder(backgrounder)
    let service = Task { try await backgrounder.run() }
    // start() is idempotent and shared with run()'s own call.
    try await backgrounder.start()
    _ = await backgrounder.schedule(WorkRequest.OneTime(taskId: job))
    await worker.waitUntilInvoked()
    service.cancel()
    try await service.value
    #expect(worker.stopReasons == [.shutdown])
    await recorder.wait { $0.taskId == job && $0.kind == .cancelled(source: .shutdown) }
    #expect(!backgrounder.diagnostics().isRunning)
    #expect(await backgrounder.schedule(WorkRequest.OneTime(taskId: job)) == .rejected(.shutDown))
  }
}

/// Records the name of the thread each message was logged on.
private struct ThreadNames: LogHandler {
  private let logged = SharedLog()
  var metadata: Logger.Metadata = [:]
  var logLevel: Logger.Level = .trace

  func names(of message: String) -> [String] {
    logged.entries.withLock { $0.filter { $0.message == message }.map(\.thread) }
  }

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  func log(event: LogEvent) {
    let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
    let thread = comm.trimmingCharacters(in: .newlines)
    logged.entries.withLock { $0.append(("\(event.message)", thread)) }
  }

  private final class SharedLog: Sendable {
    let entries = Lock<[(message: String, thread: String)]>([])
  }
}
