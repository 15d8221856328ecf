import Backgrounder
import BackgrounderLinux
import Logging
import ServiceLifecycle

// docs/library.md, step 2: a worker.

/// Uploads an album: the work, as a ``Worker``.
public struct PhotoSync: Worker {
  /// The upload itself (injected, so that tests need no server).
  let upload: @Sendable (String) async throws -> Void

  public init(upload: @escaping @Sendable (String) async throws -> Void) {
    self.upload = upload
  }

  public func execute(_ context: WorkContext) async -> WorkResult {
    // context.taskId, context.attempt (0-based), context.input, context.budget, context.progress
    guard let album = context.input.string("album") else {
      return .failure(reason: "no album in the input")
    }
    do {
      try await upload(album)  // cooperative: ends early when its Task is cancelled
      return .success
    } catch is CancellationError {
      return .retry  // the budget expired or a constraint was lost: try again later
    } catch {
      return .failure(reason: "upload of \(album) failed: \(error)")
    }
  }
}

// docs/library.md, step 3: scheduling.

public enum PhotoSyncJobs {
  /// The job's id: reverse-DNS, stable across restarts (the store keys on it).
  public static func taskId() throws -> TaskId { try TaskId("dev.example.photo-sync") }

  /// Schedules the sync of `album` every `interval` on an unmetered network while charging.
  /// Returns why it was refused, or nil when it is scheduled (or was already).
  public static func scheduleSync(
    on backgrounder: Backgrounder, album: String, every interval: Duration = .seconds(4 * 3600)
  ) async throws -> RejectionReason? {
    let request = WorkRequest.Periodic(
      taskId: try taskId(),
      constraints: WorkConstraints(networkRequired: .unmetered, requiresCharging: true),
      input: ["album": .string(album)],
      interval: interval, budget: .seconds(1800))
    switch await backgrounder.schedule(request, policy: .keep) {
    case .scheduled, .keptExisting: return nil
    case .rejected(let reason): return reason  // e.g. an interval below 1 minute
    }
  }
}

extension PhotoSyncJobs {
  /// The id of a one-time sync.
  public static func onceId() throws -> TaskId { try TaskId("dev.example.photo-sync-once") }

  /// Syncs `album` once, on any network. A fixed, valid request for a registered worker: its
  /// outcome needs no check (`schedule` is `@discardableResult`).
  public static func syncOnce(on backgrounder: Backgrounder, album: String) async throws {
    await backgrounder.schedule(
      WorkRequest.OneTime(
        taskId: try onceId(), constraints: WorkConstraints(networkRequired: .any),
        input: ["album": .string(album)]))
  }
}

// docs/library.md, step 1 and 4: the live Linux sources and the runtime, run together.

/// The whole app: the Linux condition sources and the runtime in one `ServiceGroup`, the sync
/// scheduled once the runtime has started, its events logged. Runs until SIGTERM or SIGINT.
public func runPhotoSyncApp(
  storePath: String, logger: Logger,
  upload: @escaping @Sendable (String) async throws -> Void
) async throws {
  // Network (rtnetlink, NetworkManager, nl80211), power, clock changes, mounts: one object.
  let sources = LinuxConditionSources(logger: logger)
  let backgrounder = Backgrounder(
    configuration: sources.configuration(storePath: storePath, logger: logger))
  // Each run holds systemd-logind's sleep and shutdown locks in its request's InhibitPolicy.
  try backgrounder.register(
    [try PhotoSyncJobs.taskId(), try PhotoSyncJobs.onceId()],
    factory: sources.holdingInhibitors { _ in PhotoSync(upload: upload) })
  // Before a suspend, runs under a `delay` lock stop (a retry, no attempt used); after, they run.
  let sleep = try sources.followSystemSleep(of: backgrounder)
  // Subscribe before anything happens: a stream sees only events after `events()` is called.
  let events = backgrounder.events()
  let group = ServiceGroup(
    configuration: ServiceGroupConfiguration(
      services: [sources, backgrounder, sleep], gracefulShutdownSignals: [.sigterm, .sigint],
      logger: logger))
  try await withThrowingTaskGroup(of: Void.self) { tasks in
    // Runs `sources`, the runtime and the sleep follower; ends on SIGTERM (the follower first).
    tasks.addTask { try await group.run() }
    tasks.addTask {
      try await backgrounder.start()  // idempotent: waits for the group's start
      if let reason = try await PhotoSyncJobs.scheduleSync(on: backgrounder, album: "Holidays") {
        logger.error("photo sync not scheduled: \(reason)")
      }
      for await event in events { logger.info("\(event.kind)") }  // ends at shutdown
    }
    try await tasks.waitForAll()
  }
}
