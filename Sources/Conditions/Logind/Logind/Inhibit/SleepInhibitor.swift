import Backgrounder
import Foundation
import Locking
import Logging
import SystemCalls

/// Holds systemd-logind inhibitor locks for `sleep` and for `shutdown` (`who` ``who``,
/// "backgrounder" in the daemon; `why` "running <job id>") while a run goes, in the job's
/// ``InhibitPolicy``: for the daemon's command runs (`CommandWorker`) and for a library's work
/// (`LinuxConditionSources.holdingInhibitors(from:_:)`).
///
/// Two locks, not one `sleep:shutdown` lock: logind asks polkit about a lock on both under
/// the action of neither (`inhibit-handle-lid-switch`, which Debian's policy gives no caller
/// without an active session), so an unprivileged daemon (the user unit) was refused what it
/// is allowed for each (`inhibit-delay-sleep`, `inhibit-delay-shutdown`: any caller). Each is
/// asked for on its own; a run holds what logind gives.
///
/// The lock is asked for off the dispatcher, on a task of its own, bounded by ``timeout``, so
/// neither the dispatch loop nor the run's start waits for logind. A refusal is logged once
/// (and `doctor` reports it), never fatal: the run goes on without a lock. logind absent (no
/// system bus, or nobody owning `org.freedesktop.login1`) is noted once the same way, and for
/// ``absentRetry`` after that no run asks (each ask is a bus connection attempt on a thread):
/// logind does not come and go on a running system, and a machine without it (a container, a
/// minimal edge image) then pays nothing per run for it.
package final class SleepInhibitor: Sendable {
  /// What the last request found.
  package enum Availability: Sendable, Equatable {
    /// No lock asked for yet.
    case unknown
    /// logind gave a lock.
    case available
    /// logind is not there: runs hold no lock.
    case absent(String)
    /// logind refused the lock.
    case refused(String)
  }

  /// The bus to find logind on; nil: the system bus (`DBUS_SYSTEM_BUS_ADDRESS` when set).
  let address: String?
  /// Who holds the locks, as logind lists them (`systemd-inhibit --list`'s WHO).
  package let who: String
  /// The longest a request may take.
  let timeout: Duration
  /// How long runs go without asking once logind was found absent.
  let absentRetry: Duration
  let logger: Logger
  /// The time, for ``absentRetry``.
  private let now: @Sendable () -> ContinuousClock.Instant
  private let state = Lock<
    (availability: Availability, logged: Set<String>, absentUntil: ContinuousClock.Instant?)
  >((.unknown, [], nil))
  /// The runs asking for or holding a lock now, by a number of their own.
  private let runs = Lock<(next: Int, modes: [Int: InhibitorLock])>((0, [:]))

  package init(
    address: String? = nil, who: String = "backgrounder", timeout: Duration = .seconds(2),
    absentRetry: Duration = .seconds(60), logger: Logger,
    now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
  ) {
    self.address = address
    self.who = who
    self.timeout = timeout
    self.absentRetry = absentRetry
    self.logger = logger
    self.now = now
  }

  /// What the last request found.
  package var availability: Availability { state.withLock { $0.availability } }

  /// The jobs whose runs go under a lock in `mode` now.
  package func runningJobs(mode: InhibitPolicy) -> [String] {
    runs.withLock { $0.modes.values.filter { $0.mode == mode }.map(\.jobID) }
  }

  /// The locks of the runs going now (asked for or held), by job id and mode.
  package var locks: [InhibitorLock] {
    runs.withLock { Array($0.modes.values) }
      .sorted { ($0.jobID, $0.mode.rawValue) < ($1.jobID, $1.mode.rawValue) }
  }

  /// Starts asking for a lock for a run of `jobID`; nil for ``InhibitPolicy/none``. Release the
  /// returned lock when the run ends.
  package func hold(jobID: String, mode: InhibitPolicy) -> InhibitorLock? {
    guard mode != .none else { return nil }
    let number = runs.withLock { runs in
      defer { runs.next += 1 }
      return runs.next
    }
    let lock = InhibitorLock(jobID: jobID, mode: mode) { [weak self] in
      _ = self?.runs.withLock { $0.modes.removeValue(forKey: number) }
    }
    runs.withLock { $0.modes[number] = lock }
    let time = now()
    if state.withLock({ state in state.absentUntil.map { time < $0 } ?? false }) {
      // logind was absent a moment ago: no lock to ask for.
      lock.acquired([])
      return lock
    }
    let (address, timeout) = (self.address, self.timeout)
    // The Inhibit calls block (up to `timeout` each): on a thread of their own, never on one
    // of the concurrency pool's.
    do throws(SystemCallError) {
      try SystemThread.detach(name: "bg-inhibit") {
        self.acquire(lock, jobID: jobID, mode: mode, address: address, timeout: timeout)
      }
    } catch {
      logger.warning(
        "no sleep inhibitor for this run", metadata: ["job": "\(jobID)", "reason": "\(error)"])
      lock.acquired([])
    }
    return lock
  }

  /// Asks logind for `lock`'s locks, one blocking call each, and hands them to it.
  private func acquire(
    _ lock: InhibitorLock, jobID: String, mode: InhibitPolicy, address: String?,
    timeout: Duration
  ) {
    var descriptors: [Int32] = []
    for what in Self.inhibited {
      do throws(InhibitRefusal) {
        descriptors.append(
          try LogindInhibitCall.inhibit(
            what: what, who: who, why: "running \(jobID)", mode: mode.rawValue,
            address: address, timeout: timeout))
        self.state.withLock { state in
          state.availability = .available
          state.absentUntil = nil
        }
      } catch {
        self.noteRefusal(error)
        // logind absent: the other lock cannot be had either.
        if error.isAbsent { break }
      }
    }
    lock.acquired(descriptors)
  }

  /// What a run's locks hold off, one lock each.
  package static let inhibited = ["sleep", "shutdown"]

  private func noteRefusal(_ refusal: InhibitRefusal) {
    let time = now()
    let first = state.withLock { state in
      state.availability =
        refusal.isAbsent ? .absent(refusal.description) : .refused(refusal.description)
      state.absentUntil = refusal.isAbsent ? time + absentRetry : nil
      return state.logged.insert(refusal.description).inserted
    }
    guard first else { return }
    if refusal.isAbsent {
      logger.info(
        "systemd-logind is not available: runs hold no sleep inhibitor",
        metadata: ["reason": "\(refusal.description)"])
    } else {
      logger.warning(
        "systemd-logind refused a sleep inhibitor: runs go on without one",
        metadata: ["reason": "\(refusal.description)"])
    }
  }
}

/// One run's inhibitor locks: their descriptors once logind answered. ``release()`` closes them
/// at once, or as soon as they arrive when the answer is still on its way.
package final class InhibitorLock: Sendable {
  package let jobID: String
  package let mode: InhibitPolicy
  private let state = Lock<(descriptors: [Int32], released: Bool, answered: Bool)>(
    ([], false, false))
  private let onRelease: @Sendable () -> Void

  init(jobID: String, mode: InhibitPolicy, onRelease: @escaping @Sendable () -> Void) {
    self.jobID = jobID
    self.mode = mode
    self.onRelease = onRelease
  }

  /// Whether a lock is held now.
  package var isHeld: Bool { state.withLock { !$0.descriptors.isEmpty } }

  /// Whether logind's answer is in (or no request was made): nothing more will arrive.
  package var isAnswered: Bool { state.withLock { $0.answered } }

  /// logind's answers: the locks' descriptors (none when it gave none).
  func acquired(_ descriptors: [Int32]) {
    let stale = state.withLock { state -> [Int32] in
      state.answered = true
      guard !state.released else { return descriptors }
      state.descriptors = descriptors
      return []
    }
    for descriptor in stale { close(descriptor) }
  }

  /// Releases the locks (closes their descriptors); a later answer is released on arrival.
  package func release() {
    let descriptors = state.withLock { state -> [Int32] in
      state.released = true
      defer { state.descriptors = [] }
      return state.descriptors
    }
    for descriptor in descriptors { close(descriptor) }
    onRelease()
  }
}
