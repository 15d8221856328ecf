import Foundation

/// What a task waits for, as the store is told: each written row's `blockedOn` compared with
/// the last one seen for its task. Fed by the runtime's steps (no polling); a change goes to
/// ``Backgrounder/Configuration/onWaitChange``.
struct WaitChanges: Sendable {
  /// One change: `task` now waits for `predicates` (empty: no longer waits).
  struct Change: Sendable, Equatable {
    var task: TaskId
    var predicates: [PendingPredicate]
  }

  private var seen: [TaskId: [PendingPredicate]] = [:]

  /// The changes `ops` make.
  mutating func changes(in ops: [StoreOp]) -> [Change] {
    var changes: [Change] = []
    for op in ops {
      let (id, predicates): (TaskId, [PendingPredicate])
      switch op {
      case .upsert(let row), .markStarted(let row): (id, predicates) = (row.id, row.blockedOn)
      case .delete(let task): (id, predicates) = (task, [])
      case .deleteAll:
        for task in seen.keys.sorted() { changes.append(Change(task: task, predicates: [])) }
        seen = [:]
        continue
      case .appendRun, .recordNetworkBytes: continue
      }
      guard (seen[id] ?? []) != predicates else { continue }
      seen[id] = predicates.isEmpty ? nil : predicates
      changes.append(Change(task: id, predicates: predicates))
    }
    return changes
  }
}
