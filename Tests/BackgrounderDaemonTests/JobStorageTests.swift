import Backgrounder
import Foundation
import Logging
import Testing

@testable import BackgrounderDaemon

/// How daemon jobs are kept in the store: an unchanged job reads back equal whatever version
/// of the code wrote it, and stores from the previous format are migrated without rescheduling.
@Suite(.timeLimit(.minutes(3)))
struct JobStorageTests {
  /// A job with every setting away from its default.
  private static var fullJob: JobDefinition {
    var job = JobDefinition(
      id: "dev.example.full", command: ["/bin/echo", "a b", "c/d"],
      schedule: .every(.seconds(3600), flex: .milliseconds(600_500)))
    job.network = .unmetered
    job.requiresCharging = true
    job.requiresBatteryNotLow = true
    job.budget = .seconds(300)
    job.backoff.policy = .linear
    job.backoff.initial = .seconds(20)
    job.backoff.maxAttempts = 5
    job.backoff.jitter = 0.25
    job.environment = ["A": "1", "B": "two"]
    job.environmentFile = "${CREDENTIALS_DIRECTORY}/backup.env"
    job.workingDirectory = "/tmp"
    job.expedited = true
    job.inheritEnvironment = true
    var timing = JobTiming()
    timing.windows = ["22:00-06:00", "Sat,Sun 08:00-20:00"]
    timing.windowEnd = .stop
    timing.randomDelay = .seconds(1800)
    timing.fixedRandomDelay = true
    timing.catchUp = false
    job.timing = timing
    var priority = RunPriority()
    priority.nice = -3
    priority.ioClass = .bestEffort
    priority.cpuWeight = 500
    priority.ioWeight = 50
    priority.memoryMax = 1 << 30
    job.priority = priority
    job.inhibit = .block
    job.wakeSystem = true
    job.ssids = ["Home*", "Office-WiFi"]
    job.interfaces = ["eth*"]
    job.requiresMount = "/media/backup"
    job.requiresReachable = "nas.lan:445"
    job.meteredBudget = MeteredBudget(bytes: 200_000_000, window: .trailing(seconds: 86_400))
    job.bandwidth = BandwidthCap(rate: 2_000_000, meteredRate: 500_000, required: true)
    job.stopSignal = SIGINT
    job.user = "alice"
    job.group = "backup"
    job.stopTimeout = .seconds(30)
    job.onConditionLost = .pause(max: .seconds(600))
    var relax = JobRelax(after: .seconds(3 * 86_400))
    relax.network = .any
    relax.requiresCharging = false
    relax.requiresBatteryNotLow = true
    relax.ssids = ["Phone*"]
    relax.interfaces = ["wwan*"]
    job.relax = relax
    job.requiresIdle = .seconds(600)
    job.onUserReturn = .pause
    return job
  }

  @Test("a calendar job reads back equal from the input it is stored in")
  func calendarRoundTrip() throws {
    var job = Self.fullJob
    job.schedule = .calendar(["Mon..Fri *-*-* 02:00:00", "Sat *-*-* 04:30:00 Europe/Berlin"])
    let decoded = try #require(StoredJob.decode(try StoredJob.input(for: job, origin: .config)))
    #expect(decoded.job == job)
  }

  @Test("a job reads back equal from the input it is stored in", arguments: [true, false])
  func roundTrip(periodic: Bool) throws {
    var job = Self.fullJob
    if !periodic { job.schedule = .once(delay: .seconds(36_000)) }
    let input = try StoredJob.input(for: job, origin: .cli)
    let decoded = try #require(StoredJob.decode(input))
    #expect(decoded.job == job)
    #expect(decoded.origin == .cli)
    #expect(decoded.format == StoredJob.currentFormat)
    #expect(input.int(StoredJob.formatKey) == 2)
  }

  @Test("absent settings read as their defaults and unknown ones are ignored")
  func tolerantReading() throws {
    let document =
      #"{"id":"dev.example.min","command":["/bin/true"],"every":60000000000,"#
      + #""setting-from-the-future":{"x":1}}"#
    let input: WorkInput = [
      StoredJob.formatKey: .int(2), StoredJob.definitionKey: .string(document),
      StoredJob.originKey: .string("config"),
    ]
    let decoded = try #require(StoredJob.decode(input))
    #expect(
      decoded.job
        == JobDefinition(
          id: "dev.example.min", command: ["/bin/true"], schedule: .every(.seconds(60), flex: nil)))
    #expect(
      StoredJob.decode([StoredJob.formatKey: .int(3), StoredJob.definitionKey: .string(document)])
        == nil)
  }

  @Test("every JobDefinition setting has a key in the stored format")
  func everySettingIsStored() {
    // A new setting must be added to `JobDocument` (with its default when absent); then
    // raise this count. Without it, the setting would be lost on the way through the store.
    #expect(Mirror(reflecting: Self.fullJob).children.count == 31)
  }

  /// A directory of its own for one test.
  static func makeDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("job-storage-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
  }

  /// A started runtime on `storePath` that dispatches nothing (store-editing mode), at a fixed
  /// instant.
  static func storeEditingRuntime(
    storePath: String, finishedRetention: Duration? = nil
  ) async throws -> Backgrounder {
    var settings = Backgrounder.Configuration(
      storePath: storePath,
      clock: FixedClock(WallInstant(nanosecondsSince1970: 1_795_416_400 * 1_000_000_000)),
      logger: Logger(label: "test"))
    if let finishedRetention { settings.finishedRetention = finishedRetention }
    settings.dispatchesWork = false
    let runtime = Backgrounder(configuration: settings)
    try await runtime.start()
    return runtime
  }

  @Test("a store written in the previous format keeps every schedule and is migrated in place")
  func migrationFromFormat1() async throws {
    let directory = try Self.makeDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let storePath = directory.appendingPathComponent("state.sqlite").path
    let fixture = FixturePaths.root.appendingPathComponent("store")
    try FileManager.default.copyItem(
      atPath: fixture.appendingPathComponent("v1-daemon-jobs.sqlite").path, toPath: storePath)
    let configPath = directory.appendingPathComponent("config.toml").path
    try String(
      contentsOfFile: fixture.appendingPathComponent("v1-daemon-jobs.toml").path, encoding: .utf8
    )
    .replacingOccurrences(of: "/tmp/fixture-gen", with: directory.path)
    .write(toFile: configPath, atomically: true, encoding: .utf8)
    let configuration = try ConfigurationLoader.load(path: configPath)

    let before = try TaskStoreReader(path: storePath).tasks(historyLimit: 0)
    #expect(before.map(\.id.rawValue) == ["dev.example.hourly", "dev.example.later"])
    for task in before {
      let stored = try #require(StoredJob.decode(task.input))
      #expect(stored.format == 1)
      #expect(configuration.jobs.contains(stored.job))
    }

    // Store-editing mode at the time the fixture was written: nothing is dispatched.
    let runtime = try await Self.storeEditingRuntime(
      storePath: storePath, finishedRetention: .seconds(10 * 365 * 86_400))
    let synchronizer = JobSynchronizer(runtime: runtime, logger: Logger(label: "test"))
    await synchronizer.apply(configuration)
    let after = try await runtime.storedTasks(historyLimit: 0)
    await runtime.shutdown()

    #expect(after.count == before.count)
    for (old, new) in zip(before, after) {
      #expect(new.id == old.id)
      #expect(new.nextRun == old.nextRun, "the schedule of \(old.id) was kept")
      #expect(new.attempt == old.attempt)
      #expect(new.lastResult == old.lastResult)
      #expect(new.lastRunEndedAt == old.lastRunEndedAt)
      let stored = try #require(StoredJob.decode(new.input))
      #expect(stored.format == StoredJob.currentFormat, "\(old.id) was rewritten in format 2")
      #expect(stored.origin == .config)
      #expect(configuration.jobs.contains(stored.job))
      #expect(JobSynchronizer.policy(for: stored.job, existing: new) == nil)
    }
  }

  @Test(
    "a task whose stored inhibit policy is not its job's (stored before i27-inhibit) is updated")
  func inhibitPolicyFromBeforeTheMigrationIsUpdated() async throws {
    let directory = try Self.makeDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let runtime = try await Self.storeEditingRuntime(
      storePath: directory.appendingPathComponent("state.sqlite").path)
    var job = JobDefinition(
      id: "dev.example.block", command: ["/bin/true"], schedule: .every(.seconds(3600), flex: nil))
    job.inhibit = .block
    guard case .periodic(var request) = try JobRequests.request(for: job, origin: .config) else {
      Issue.record("an every job gives a periodic request")
      return
    }
    // As the migration left it: the column's default, whatever the job says.
    request.inhibitPolicy = .delay
    #expect(await runtime.schedule(request) == .scheduled)
    let older = try #require(try await runtime.storedTasks(historyLimit: 0).first)
    #expect(older.inhibitPolicy == .delay)
    #expect(JobSynchronizer.policy(for: job, existing: older) == .update)

    request.inhibitPolicy = .block
    #expect(await runtime.schedule(request, policy: .update) == .scheduled)
    let current = try #require(try await runtime.storedTasks(historyLimit: 0).first)
    #expect(current.inhibitPolicy == .block)
    #expect(JobSynchronizer.policy(for: job, existing: current) == nil)
    await runtime.shutdown()
  }
  @Test(
    "an unchanged job stored by another build is stored again with this build's digest, its schedule kept, in one transaction"
  )
  func unchangedJobsGetThisBuildsDigest() async throws {
    let directory = try Self.makeDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let storePath = directory.appendingPathComponent("state.sqlite").path
    let configPath = directory.appendingPathComponent("config.toml").path
    var text = "[store]\npath = \"\(storePath)\"\n"
    for index in 1...5 {
      text +=
        "[[job]]\nid = \"dev.example.job-\(index)\"\ncommand = [\"/bin/true\"]\nevery = \"1h\"\n"
    }
    try text.write(toFile: configPath, atomically: true, encoding: .utf8)
    let configuration = try ConfigurationLoader.load(path: configPath)
    #expect(configuration.jobDigests.count == 5, "this build has a build ID")
    let runtime = try await Self.storeEditingRuntime(storePath: storePath)
    // As an earlier build stored them: the same definitions, job 1 with another build's digest,
    // the others with none (stored before digests).
    for job in configuration.jobs {
      let digest = job.id == "dev.example.job-1" ? String(repeating: "0", count: 32) : nil
      let request = try JobRequests.request(for: job, origin: .config, digest: digest)
      #expect(await runtime.schedule(request) == .scheduled)
    }
    let before = try await runtime.storedTasks(historyLimit: 0)
    let synchronizer = JobSynchronizer(runtime: runtime, logger: Logger(label: "test"))
    let commits = runtime.diagnostics().storeCommits

    await synchronizer.apply(configuration)
    #expect(runtime.diagnostics().storeCommits == commits + 1)
    let after = try await runtime.storedTasks(historyLimit: 0)
    #expect(after.count == 5)
    for (old, new) in zip(before, after) {
      #expect(new.id == old.id)
      #expect(new.nextRun == old.nextRun, "the schedule of \(old.id) was kept")
      #expect(new.attempt == old.attempt)
      let digest = try #require(configuration.jobDigests[new.id.rawValue])
      #expect(new.hasInput(StoredJob.digestKey, .string(digest)), "\(new.id)")
      #expect(!old.hasInput(StoredJob.digestKey, .string(digest)), "\(old.id)")
    }

    await synchronizer.apply(configuration)
    #expect(runtime.diagnostics().storeCommits == commits + 1, "now known unchanged by digest")
    await runtime.shutdown()
  }

  @Test("hasInput(key, value) answers as a decode would: key first, absent, not first, escaped")
  func storedInputKey() async throws {
    let directory = try Self.makeDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let runtime = try await Self.storeEditingRuntime(
      storePath: directory.appendingPathComponent("state.sqlite").path)
    let inputs: [String: WorkInput] = [
      "dev.example.first": ["digest": .string("abc"), "more": .int(1)],
      "dev.example.alone": ["digest": .string("abc")],
      "dev.example.longer": ["digest": .string("abcd"), "more": .int(1)],
      "dev.example.second": ["a": .int(1), "digest": .string("abc")],
      "dev.example.none": ["more": .int(1)],
      "dev.example.escaped": ["a/b": .string("abc"), "digest": .string("x\"y")],
    ]
    for (id, input) in inputs {
      let request = WorkRequest.OneTime(
        taskId: try TaskId(id), input: input, initialDelay: .seconds(3600))
      #expect(await runtime.schedule(request) == .scheduled)
    }
    let tasks = try await runtime.storedTasks(historyLimit: 0)
    await runtime.shutdown()
    #expect(tasks.count == inputs.count)
    let probes: [(String, WorkValue)] = [
      ("digest", .string("abc")), ("digest", .string("ab")), ("digest", .string("abcd")),
      ("digest", .int(1)), ("more", .int(1)), ("a/b", .string("abc")),
      ("digest", .string("x\"y")), ("absent", .int(1)),
    ]
    for task in tasks {
      let input = try #require(inputs[task.id.rawValue])
      for (key, value) in probes {
        #expect(
          task.hasInput(key, value) == (input[key] == value), "\(task.id): \(key) = \(value)")
      }
    }
  }

  @Test("a config's new and changed jobs are stored in one transaction; unchanged ones in none")
  func applyCommitsOnce() async throws {
    let directory = try Self.makeDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let storePath = directory.appendingPathComponent("state.sqlite").path
    let configPath = directory.appendingPathComponent("config.toml").path
    func load(_ jobs: [Int], changed: Int? = nil) throws -> DaemonConfiguration {
      var text = "[store]\npath = \"\(storePath)\"\n"
      for index in jobs {
        let every = index == changed ? "2h" : "1h"
        text += "[[job]]\nid = \"dev.example.job-\(index)\"\ncommand = [\"/bin/true\"]\n"
        text += "every = \"\(every)\"\n"
      }
      try text.write(toFile: configPath, atomically: true, encoding: .utf8)
      return try ConfigurationLoader.load(path: configPath)
    }
    let runtime = try await Self.storeEditingRuntime(storePath: storePath)
    let synchronizer = JobSynchronizer(runtime: runtime, logger: Logger(label: "test"))
    let first = runtime.diagnostics().storeCommits

    await synchronizer.apply(try load(Array(1...25)))
    #expect(runtime.diagnostics().storeCommits == first + 1)
    #expect(try await runtime.storedTasks(historyLimit: 0).count == 25)

    // What the next apply compares without encoding or decoding any definition: each stored
    // input carries the digest of its job's config table (and is, byte for byte, the input the
    // config's job stores today).
    let tasks = Dictionary(
      uniqueKeysWithValues: try await runtime.storedTasks(historyLimit: 0).map {
        ($0.id.rawValue, $0)
      })
    let configuration = try load(Array(1...25))
    for job in configuration.jobs {
      let digest = try #require(configuration.jobDigests[job.id])
      #expect(tasks[job.id]?.hasInput(StoredJob.digestKey, .string(digest)) == true, "\(job.id)")
      let input = try StoredJob.input(for: job, origin: .config, digest: digest)
      #expect(tasks[job.id]?.hasInput(input) == true, "\(job.id)")
      #expect(tasks[job.id]?.hasInput(try StoredJob.input(for: job, origin: .cli)) == false)
    }

    await synchronizer.apply(try load(Array(1...25)))
    #expect(runtime.diagnostics().storeCommits == first + 1, "nothing changed: nothing written")

    // Job 3 changed, job 26 new (one transaction); job 25 removed (its cancel is a commit).
    await synchronizer.apply(try load(Array(1...24) + [26], changed: 3))
    #expect(runtime.diagnostics().storeCommits == first + 3)
    let stored = try await runtime.storedTasks(historyLimit: 0).filter { !$0.state.isFinished }
    #expect(
      Set(stored.map(\.id.rawValue))
        == Set((1...24).map { "dev.example.job-\($0)" } + ["dev.example.job-26"]))
    let third = try #require(stored.first { $0.id.rawValue == "dev.example.job-3" })
    #expect(JobRequests.job(in: third.input)?.0.schedule == .every(.seconds(7200), flex: nil))
    await runtime.shutdown()
  }
}

/// A clock that stays at one instant (store-editing runtimes never sleep).
private struct FixedClock: WallClock {
  let now: WallInstant

  init(_ now: WallInstant) {
    self.now = now
  }

  var minimumResolution: Duration { .nanoseconds(1) }

  func sleep(until deadline: WallInstant, tolerance: Duration?) async throws {
    try await Task.sleep(for: .seconds(3600))
  }
}
