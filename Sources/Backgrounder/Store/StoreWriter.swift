import DequeModule
import Foundation
import Locking
import SystemCalls

/// The single writer of a store. Changes are enqueued in decision order (under the
/// dispatcher's lock) and committed by a commit thread in batches, one transaction per batch
/// (group commit: everything enqueued while a commit runs shares the next transaction and its
/// fsync). Events enqueued with the changes are delivered, and waiters resumed, only after the
/// batch that carries them has committed, so a subscriber never sees an outcome the store does
/// not hold yet.
///
/// The commit thread blocks (fsync) off the Swift concurrency pool. It is started by the
/// enqueue that finds the queue idle and ends once it has emptied the queue, so at most one
/// runs and an idle store has none: it wakes nothing and costs no thread. (GRDB's `async`
/// writes would run on a Dispatch worker thread, which stays alive and wakes 5 s after every
/// commit.)
final class StoreWriter: Sendable {
  /// A position in the queue; `waitCommitted(_:)` waits until everything up to it is durable.
  typealias Sequence = UInt64

  /// One enqueue: its changes and events, kept together (a batch never splits one) and moved
  /// in whole, where one queue element per change and per event was copied in and out of the
  /// queue under its lock and again into the transaction's list (issue #35: a sixth of the
  /// commit thread's samples in the dispatch benchmark).
  private struct Entry {
    var sequence: Sequence
    var ops: [StoreOp]
    var events: [MonitorEvent]
  }

  private struct Waiter {
    var sequence: Sequence
    var continuation: CheckedContinuation<Void, any Error>
  }

  private struct State {
    var queue: Deque<Entry> = []
    /// The changes in `queue`.
    var queuedOps = 0
    var enqueued: Sequence = 0
    var committed: Sequence = 0
    var failures: [(Sequence, StoreError)] = []
    var waiters: [Waiter] = []
    /// The commit thread has been woken for the queue and has not emptied it yet.
    var draining = false
    var closed = false
    /// Closed and the queue written: later changes fail as not written.
    var threadEnded = false
    var commits = 0
    var operations = 0
    var writeTime: Duration = .zero
    var lastError: String?
  }

  private let store: TaskStore
  private let events: EventHub
  private let state = Lock(State())
  /// Ops per transaction at most (bounds the latency of one commit).
  private let maxBatch = 4096

  init(store: TaskStore, events: EventHub) {
    self.store = store
    self.events = events
  }

  /// Starts the commit thread, which drains the queue and ends (`draining` was just set).
  private func startCommitThread() {
    do {
      try SystemThread.detach(name: "bg-store-commit") { self.drain() }
    } catch {
      // No thread, no commits: every writer would wait for good.
      fatalError("the store's commit thread did not start: \(error)")
    }
  }

  /// Enqueues changes and events; returns the sequence to wait for. Never blocks on I/O.
  @discardableResult
  func enqueue(_ ops: [StoreOp], events: [MonitorEvent]) -> Sequence {
    let (sequence, wake, closed) = state.withLock { state -> (Sequence, Bool, Bool) in
      if ops.isEmpty && events.isEmpty { return (state.enqueued, false, false) }
      state.enqueued += 1
      let sequence = state.enqueued
      if state.threadEnded { return (sequence, false, true) }
      state.queue.append(Entry(sequence: sequence, ops: ops, events: events))
      state.queuedOps += ops.count
      let wake = !state.draining
      state.draining = true
      return (sequence, wake, false)
    }
    if closed {
      // After `close()` nothing reaches the disk: report the changes as not written.
      finish(
        [Entry(sequence: sequence, ops: ops, events: events)],
        failure: .writeFailed(detail: "the store is closed"))
    } else if wake {
      startCommitThread()
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

  /// Closes the writer once the queue is written; later changes fail as not written.
  func close() {
    let wake = state.withLock { state in
      state.closed = true
      defer { state.draining = true }
      return !state.draining
    }
    if wake { startCommitThread() }
  }

  var statistics: (commits: Int, operations: Int, writeTime: Duration, lastError: String?) {
    state.withLock { ($0.commits, $0.operations, $0.writeTime, $0.lastError) }
  }

  /// On the commit thread: commits batches until the queue is empty, then the thread ends.
  private func drain() {
    while true {
      let next = state.withLock { state -> [Entry]? in
        if state.queue.isEmpty {
          state.draining = false
          state.threadEnded = state.closed
          // A deque keeps its storage when emptied: the start of a daemon with 1,000 jobs left
          // 1.28 MB of it allocated all day (heaptrack; issue #35's ≤ 9 MiB idle).
          state.queue = []
          return nil
        }
        if state.queuedOps <= maxBatch {
          // The usual case: everything queued is one batch.
          defer {
            state.queue = []
            state.queuedOps = 0
          }
          return Array(state.queue)
        }
        // Whole enqueues only: a batch closes at the first one that reaches `maxBatch`.
        var batch: [Entry] = []
        var opCount = 0
        while opCount < maxBatch, let entry = state.queue.popFirst() {
          opCount += entry.ops.count
          batch.append(entry)
        }
        state.queuedOps -= opCount
        return batch
      }
      guard let batch = next else { return }
      commit(batch)
    }
  }

  private func commit(_ batch: [Entry]) {
    guard batch.contains(where: { !$0.ops.isEmpty }) else {
      finish(batch, failure: nil)
      return
    }
    let started = ContinuousClock.now
    do {
      let wroteRows = try store.write(batch.map(\.ops))
      finish(batch, failure: nil, elapsed: ContinuousClock.now - started, wroteRows: wroteRows)
    } catch {
      finish(
        batch, failure: .writeFailed(detail: "\(error)"), elapsed: ContinuousClock.now - started)
    }
  }

  /// Delivers a batch's events and resumes its waiters once its fate is known.
  private func finish(
    _ batch: [Entry], failure: StoreError?, elapsed: Duration = .zero,
    wroteRows: Bool = false
  ) {
    var pendingEvents = batch.count == 1 ? batch[0].events : batch.flatMap(\.events)
    let opCount = batch.reduce(0) { $0 + $1.ops.count }
    if let failure {
      // A start whose claim is not durable did not happen: the worker is not invoked.
      pendingEvents.removeAll { event in
        if case .workStarted = event.kind { true } else { false }
      }
      pendingEvents.append(
        MonitorEvent(
          taskId: nil, time: pendingEvents.last?.time ?? .now,
          kind: .libraryError(message: failure.description)))
    }
    events.emit(pendingEvents)
    let last = batch.last?.sequence ?? 0
    let ready = state.withLock { state -> [(Waiter, StoreError?)] in
      state.committed = max(state.committed, last)
      state.writeTime += elapsed
      if let failure {
        state.lastError = failure.description
        for entry in batch { state.failures.append((entry.sequence, failure)) }
        if state.failures.count > 1024 { state.failures.removeFirst(state.failures.count - 1024) }
      } else {
        state.commits += opCount == 0 ? 0 : 1
        state.operations += opCount
        if wroteRows { state.lastError = nil }
      }
      var ready: [(Waiter, StoreError?)] = []
      state.waiters.removeAll { waiter in
        guard waiter.sequence <= state.committed else { return false }
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
