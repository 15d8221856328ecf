import Backgrounder
import Foundation
import Logging

/// Edits the store directly when no daemon is running: a runtime that never dispatches work,
/// opened under the store locks so that a live daemon's store is never touched behind its back
/// and concurrent edits take turns (see ``StoreLock``).
package enum OfflineStore {
  /// Runs `body` against the store of `configuration`, then closes it.
  package static func edit<T: Sendable>(
    _ configuration: DaemonConfiguration, logger: Logger,
    _ body: (Backgrounder, JobSynchronizer) async throws -> T
  ) async throws -> T {
    let lock = try await StoreLock.editing(storePath: configuration.storePath)
    var runtimeConfiguration = Backgrounder.Configuration(
      storePath: configuration.storePath, logger: logger,
      finishedRetention: Daemon.finishedRetention)
    runtimeConfiguration.dispatchesWork = false
    runtimeConfiguration.storeOpenPath = lock.storeOpenPath
    let runtime = Backgrounder(configuration: runtimeConfiguration)
    try await runtime.start()
    do {
      let result = try await body(runtime, JobSynchronizer(runtime: runtime, logger: logger))
      await runtime.shutdown()
      withExtendedLifetime(lock) {}
      return result
    } catch {
      await runtime.shutdown()
      withExtendedLifetime(lock) {}
      throw error
    }
  }
}
