import Foundation
import GRDB

@testable import Backgrounder

/// A store at `path` as a daemon that migrated it only up to `version` left it, holding one
/// pending one-time task `id` (the columns of the first schema set, every later one defaulted).
/// The caller closes the queue, after migrating further if it likes.
func olderStore(at path: String, upTo version: String, holding id: TaskId, now: WallInstant)
  throws -> DatabaseQueue
{
  let queue = try DatabaseQueue(path: path)
  try Schema.migrator.migrate(queue, upTo: version)
  try queue.write { db in
    try db.execute(
      sql: """
        INSERT INTO task (id, kind, state, attempt, deferrals, blockedOn, ephemeral, network,
          requiresCharging, requiresBatteryNotLow, initialDelay, budget, backoffKind,
          backoffInitial, backoffMaxAttempts, backoffJitter, input, scheduledAt, updatedAt)
        VALUES (?, 'oneTime', 'pending', 0, 0, '', 0, 'none', 0, 0, 0, 600000000000,
          'exponential', 30000000000, 10, 0, x'', ?, ?)
        """,
      arguments: [id.rawValue, now.nanosecondsSince1970, now.nanosecondsSince1970])
  }
  return queue
}
