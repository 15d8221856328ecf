import Foundation
import Locking

/// The runs going now, by run id: what a stop that cannot wait for the runner's grace period
/// (the system about to sleep) kills early.
final class LiveRuns: Sendable {
  private let scopes = Lock<[String: RunScope]>([:])
  /// Held while a run's process is spawned and its leader registered (``registering(_:)``),
  /// and while a sweep compares the daemon's children with the leaders: a sweep never sees a
  /// leader that is not registered yet, which it took for an orphan and answered with a scan
  /// of every process in `/proc` (issue #35: about 3 % of runs once spawns moved to the main
  /// thread, whose children the sweep reads).
  private let registration = Lock(())

  /// Runs `body` (a spawn and its ``update(_:)``, or a sweep's reading of the children and
  /// ``leaders()``) while no other such body runs.
  func registering<Result>(_ body: () throws -> Result) rethrows -> Result {
    try registration.withLock { _ in try body() }
  }

  func update(_ scope: RunScope) {
    scopes.withLock { $0[scope.runID] = scope }
  }

  func remove(runID: String) {
    _ = scopes.withLock { $0.removeValue(forKey: runID) }
  }

  /// The pids of the runs' leaders that started.
  func leaders() -> Set<pid_t> {
    scopes.withLock { Set($0.values.compactMap { $0.leader?.pid }) }
  }

  /// The ids of the runs of `jobIDs` going now.
  func runIDs(of jobIDs: Set<String>) -> [String] {
    scopes.withLock { $0.values.filter { jobIDs.contains($0.jobID) }.map(\.runID) }
  }

  /// Sends SIGKILL to what is left of the runs `runIDs` that are still going (their process
  /// group, session and cgroup); a run that ended meanwhile is not touched.
  func kill(runIDs: [String]) {
    let going = scopes.withLock { scopes in runIDs.compactMap { scopes[$0] } }
    for scope in going { ProcessSweep(scope: scope).signal(SIGKILL) }
  }
}
