import Backgrounder
import Foundation
import Locking

/// Reads the tasks for `status` from the store, read-only. A missing store means no tasks yet;
/// any other problem (corrupt file, newer schema) is reported on stderr once and makes `status`
/// exit non-zero after printing the rest.
final class TaskSection: Sendable {
  let storePath: String
  private let failure = Lock<String?>(nil)

  init(storePath: String) {
    self.storePath = storePath
  }

  /// Whether reading the store failed.
  var failed: Bool { failure.withLock { $0 != nil } }

  /// The tasks, `[]` when the store does not exist, nil when it cannot be read.
  func read(now: Date) -> [TaskStatus]? {
    do {
      return try TaskStoreReader(path: storePath).tasks(now: now, includingInput: false)
    } catch let error as StoreError where error.code == .notFound {
      return []
    } catch {
      let message = "\(error)"
      let isNew = failure.withLock { previous in
        defer { previous = message }
        return previous != message
      }
      if isNew { Output.error("cannot read tasks: \(message)") }
      return nil
    }
  }
}
