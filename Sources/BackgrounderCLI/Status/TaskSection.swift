import Backgrounder
import Foundation
import Locking

/// Reads the tasks for `status` from the store, read-only. A missing store means no tasks yet;
/// any other problem (corrupt file, newer schema) is reported on stderr once and makes `status`
/// exit non-zero after printing the rest.
///
/// The store connection is kept from one read to the next (`status --watch` reads at every task
/// change) and opened again only when the file at the path is another one, or the last read
/// found no tasks (the daemon may have been creating the schema). Releasing a connection
/// disposes of its Dispatch queue on a Dispatch worker, which arms libdispatch's workqueue
/// monitor: a watching process would then wake once a second for as long as it runs.
final class TaskSection: Sendable {
  let storePath: String
  private let failure = Lock<String?>(nil)
  private let kept = Lock<(reader: TaskStoreReader, file: FileIdentity)?>(nil)
  private let openCount = Lock(0)

  init(storePath: String) {
    self.storePath = storePath
  }

  /// How many store connections were opened so far.
  var opens: Int { openCount.withLock { $0 } }

  /// Whether reading the store failed.
  var failed: Bool { failure.withLock { $0 != nil } }

  /// The tasks, `[]` when the store does not exist, nil when it cannot be read.
  func read(now: Date) -> [TaskStatus]? {
    do {
      let file = FileIdentity(of: storePath)
      let reader =
        try kept.withLock { $0?.file == file ? $0?.reader : nil }
        ?? open()
      let tasks = try reader.tasks(now: now, includingInput: false)
      kept.withLock { $0 = tasks.isEmpty ? nil : file.map { (reader, $0) } }
      return tasks
    } catch let error as StoreError where error.code == .notFound {
      kept.withLock { $0 = nil }
      return []
    } catch {
      kept.withLock { $0 = nil }
      let message = "\(error)"
      let isNew = failure.withLock { previous in
        defer { previous = message }
        return previous != message
      }
      if isNew { Output.error("cannot read tasks: \(message)") }
      return nil
    }
  }

  /// Leaves this section, and the store connection it keeps, to the end of the process: a
  /// one-shot `status` exits next. Closing the connection cost a third as much as reading the
  /// store, and started the command's one thread: GRDB's `DatabaseQueue.deinit` calls
  /// `NotificationCenter.removeObserver`, whose first cast boxes a Swift value through
  /// Foundation and scans every protocol conformance in the binary on the way (0.86M of a
  /// one-shot `status --json`'s 9.08M instructions; BENCHMARKS.md).
  func keepUntilExit() { Self.keptUntilExit.withLock { $0.append(self) } }

  private static let keptUntilExit = Lock<[TaskSection]>([])

  private func open() throws -> TaskStoreReader {
    openCount.withLock { $0 += 1 }
    return try TaskStoreReader(path: storePath)
  }
}
