import Backgrounder
import Foundation

/// The daemon, tasks and health sections of `status --watch --json` lines, kept from line to
/// line and read again only when they can have changed, so a network line costs a few `stat`s
/// instead of a store read and a control-socket request.
///
/// - The tasks are read again when the store file or its WAL changed (or changed so recently
///   that a write in the same clock tick could hide: ``FileFingerprint/changedRecently(before:)``),
///   when a time a task waits for has passed (its pending predicates change), after a task change
///   from the daemon, when the daemon section changed, or when the last read failed.
/// - The daemon is asked again unless its answer cannot have changed: no socket file (nothing
///   to ask until one appears), or a running daemon whose task-change stream is connected (its
///   end says the daemon stopped; every task change, a store error among them, asks again).
///   A daemon found without that stream, a socket nobody answers on and a socket that could
///   not be asked are asked every line, as before.
struct WatchSections {
  private let printer: StatusPrinter
  private let now: () -> Date
  private let walPath: String
  private let socketIsAbstract: Bool
  private var current: StatusSections?
  /// Changes whenever ``sections()`` hands out new sections: the same generation, the same
  /// sections (the line encoder then reuses their JSON without comparing them).
  private(set) var generation = 0
  /// The store as last read: its files' fingerprints before the read, when the read began, and
  /// the tasks as stored (`nil`: unreadable).
  private var store: (fingerprint: StoreFingerprint, readAt: Date, tasks: [TaskStatus]?)?
  /// Before this time the tasks' pending predicates stay as read.
  private var tasksValidUntil = Date.distantFuture
  private var daemon: (socket: FileFingerprint, report: DaemonSection.Report)?
  private var followsDaemon = false
  /// How often the store was read and the daemon asked (for tests).
  private(set) var storeReads = 0
  private(set) var daemonRequests = 0

  init(printer: StatusPrinter, now: @escaping () -> Date = Date.init) {
    self.printer = printer
    self.now = now
    walPath = printer.tasks.storePath + "-wal"
    socketIsAbstract = printer.daemon.socketPath.hasPrefix("@")
  }

  /// The sections for the next line.
  mutating func sections() -> StatusSections {
    let now = now()
    let daemonChanged = refreshDaemon()
    let tasksChanged = refreshTasks(now: now, daemonChanged: daemonChanged)
    if let current, !daemonChanged, !tasksChanged { return current }
    let sections = printer.sections(daemon: daemon!.report, storedTasks: store!.tasks)
    current = sections
    generation &+= 1
    return sections
  }

  /// A task changed (the daemon said so): the tasks, and the daemon's store error, are read
  /// again for the next line.
  mutating func taskChanged() {
    store = nil
    daemon = nil
  }

  /// Whether the daemon's task-change stream is connected; when it ends the daemon stopped or
  /// restarted, so both are read again.
  mutating func setFollowsDaemon(_ follows: Bool) {
    followsDaemon = follows
    store = nil
    daemon = nil
  }

  /// Asks the daemon unless its last answer still holds; whether the report changed.
  private mutating func refreshDaemon() -> Bool {
    let socket =
      socketIsAbstract
      ? .missing : FileFingerprint(of: printer.daemon.socketPath, followLinks: false)
    if let daemon, daemon.socket == socket {
      let report = daemon.report
      let nobodyThere =
        !socketIsAbstract && !socket.exists && !report.running && report.error == nil
      if nobodyThere || (report.running && followsDaemon) { return false }
    }
    daemonRequests += 1
    let report = printer.daemon.read()
    defer { daemon = (socket, report) }
    return daemon?.report != report
  }

  /// Reads the store unless the last read still holds; whether the tasks were read again.
  private mutating func refreshTasks(now: Date, daemonChanged: Bool) -> Bool {
    let file = FileFingerprint(of: printer.tasks.storePath)
    // Without the store file its WAL holds nothing readable.
    let fingerprint = StoreFingerprint(
      file: file, wal: file.exists ? FileFingerprint(of: walPath) : .missing)
    if let store, !daemonChanged, store.tasks != nil, store.fingerprint == fingerprint,
      !fingerprint.file.changedRecently(before: store.readAt),
      !fingerprint.wal.changedRecently(before: store.readAt), now < tasksValidUntil
    {
      return false
    }
    storeReads += 1
    let tasks = printer.tasks.read(now: now)
    store = (fingerprint, now, tasks)
    tasksValidUntil = Self.earliestWait(in: tasks ?? [], after: now)
    return true
  }

  /// The store file's and its WAL's fingerprints.
  private struct StoreFingerprint: Equatable {
    var file: FileFingerprint
    var wal: FileFingerprint
  }

  /// The earliest time after `now` a task waits for: its pending predicates change then.
  private static func earliestWait(in tasks: [TaskStatus], after now: Date) -> Date {
    var earliest = Date.distantFuture
    for task in tasks {
      for predicate in task.pendingPredicates {
        switch predicate {
        case .waitingForBackoff(let date), .waitingForEarliestBeginDate(let date),
          .waitingForWindow(let date):
          if date > now, date < earliest { earliest = date }
        default: break
        }
      }
    }
    return earliest
  }
}
