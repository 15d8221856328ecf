import Foundation
import Locking

/// The runs going now, by run id: what a stop that cannot wait for the runner's grace period
/// (the system about to sleep) kills early.
final class LiveRuns: Sendable {
  private let scopes = Lock<[String: RunScope]>([:])

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
