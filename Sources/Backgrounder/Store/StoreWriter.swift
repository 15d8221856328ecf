import DequeModule
import Synchronization

/// The single writer of a store. Changes are enqueued in decision order (under the
/// dispatcher's lock) and committed in batches, one transaction per batch (group commit).
/// Events enqueued with the changes are delivered only after the batch that carries them has
/// committed, so a subscriber never sees an outcome the store does not hold yet.
final class StoreWriter: Sendable {
  /// A position in the queue; `waitCommitted(_:)` waits until everything up to it is durable.
  typealias Sequence = UInt64

  private enum Item {
    case op(StoreOp)
    case event(MonitorEvent)
  }

  private struct Waiter {
    var sequence: Sequence
    var continuation: CheckedContinuation<Void, any Error>
  }

  private struct State {
    var queue: Deque<(Sequence, Item)> = []
    var enqueued: Sequence = 0
    var committed: Sequence = 0
    var failures: [(Sequence, StoreError)] = []
    var waiters: [Waiter] = []
    var draining = false
    var commits = 0
    var operations = 0
    var writeTime: Duration = .zero
    var lastError: String?
  }

  private let store: TaskStore
  private let events: EventHub
  private let state = Mutex(State())
  /// Ops per transaction at most (bounds the latency of one commit).
  private let maxBatch = 4096

  init(store: TaskStore, events: EventHub) {
    self.store = store
    self.events = events
  }

  /// Enqueues changes and events; returns the sequence to wait for. Never blocks on I/O.
  @discardableResult
  func enqueue(_ ops: [StoreOp], events: [MonitorEvent]) -> Sequence {
    let (sequence, startDrain) = state.withLock { state -> (Sequence, Bool) in
      if ops.isEmpty && events.isEmpty { return (state.enqueued, false) }
      state.enqueued += 1
      let sequence = state.enqueued
      for op in ops { state.queue.append((sequence, .op(op))) }
      for event in events { state.queue.append((sequence, .event(event))) }
      let start = !state.draining
      state.draining = true
      return (sequence, start)
    }
    if startDrain {
      Task { await self.drain() }
    }
    return sequence
  }

  /// Waits until every change up to `sequence` is committed; throws the write error otherwise.
  func waitCommitted(_ sequence: Sequence) async throws {
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      let result: Result<Void, StoreError>? = state.withLock { state in
        if sequence <= state.committed {
          if let failure = state.failures.first(where: { $0.0 == sequence }) {
            return .failure(failure.1)
          }
          return .success(())
        }
        state.waiters.append(Waiter(sequence: sequence, continuation: continuation))
        return nil
      }
      if let result { continuation.resume(with: result) }
    }
  }

  /// Waits until everything enqueued so far is committed (errors are reported as events).
  func flush() async {
    let sequence = state.withLock { $0.enqueued }
    try? await waitCommitted(sequence)
  }

  var statistics: (commits: Int, operations: Int, writeTime: Duration, lastError: String?) {
    state.withLock { ($0.commits, $0.operations, $0.writeTime, $0.lastError) }
  }

  private func drain() async {
    while true {
      let batch = state.withLock { state -> [(Sequence, Item)]? in
        if state.queue.isEmpty {
          state.draining = false
          return nil
        }
        var batch: [(Sequence, Item)] = []
        var opCount = 0
        while let first = state.queue.first {
          // Never split one enqueue across two batches.
          if opCount >= maxBatch, let last = batch.last, last.0 != first.0 { break }
          batch.append(state.queue.removeFirst())
          if case .op = first.1 { opCount += 1 }
        }
        return batch
      }
      guard let batch else { return }
      await commit(batch)
    }
  }

  private func commit(_ batch: [(Sequence, Item)]) async {
    var ops: [StoreOp] = []
    var pendingEvents: [MonitorEvent] = []
    for (_, item) in batch {
      switch item {
      case .op(let op): ops.append(op)
      case .event(let event): pendingEvents.append(event)
      }
    }
    let last = batch.last?.0 ?? 0
    var failure: StoreError?
    var elapsed: Duration = .zero
    if !ops.isEmpty {
      let started = ContinuousClock.now
      do {
        try await store.apply(ops)
      } catch {
        failure = .writeFailed(detail: "\(error)")
      }
      elapsed = ContinuousClock.now - started
    }
    if let failure {
      pendingEvents.append(
        MonitorEvent(
          taskId: nil, time: pendingEvents.last?.time ?? .now,
          kind: .libraryError(message: failure.description)))
    }
    events.emit(pendingEvents)
    let ready = state.withLock { state -> [(Waiter, StoreError?)] in
      state.committed = last
      state.writeTime += elapsed
      if failure == nil {
        state.commits += ops.isEmpty ? 0 : 1
        state.operations += ops.count
      } else {
        state.lastError = failure?.description
        let sequences = Set(batch.map(\.0))
        for sequence in sequences.sorted() { state.failures.append((sequence, failure!)) }
        if state.failures.count > 1024 { state.failures.removeFirst(state.failures.count - 1024) }
      }
      var ready: [(Waiter, StoreError?)] = []
      state.waiters.removeAll { waiter in
        guard waiter.sequence <= last else { return false }
        let error = state.failures.first(where: { $0.0 == waiter.sequence })?.1
        ready.append((waiter, error))
        return true
      }
      return ready
    }
    for (waiter, error) in ready {
      if let error {
        waiter.continuation.resume(throwing: error)
      } else {
        waiter.continuation.resume()
      }
    }
  }
}
