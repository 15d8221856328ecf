import ServiceLifecycle
import SystemCalls

/// How a descriptor registered on an event loop is served until its handler fails, the task is
/// cancelled or a graceful shutdown begins.
package struct LoopServing: Sendable {
  private let failures: AsyncStream<SystemCallError>
  private let failed: AsyncStream<SystemCallError>.Continuation

  package init() {
    (failures, failed) = AsyncStream<SystemCallError>.makeStream()
  }

  /// Ends the wait with `error` (from the handler, on the loop).
  package func fail(_ error: SystemCallError) {
    failed.yield(error)
    failed.finish()
  }

  /// Waits for the first failure, cancellation or a graceful shutdown, then deregisters
  /// `registration` from `loop` (on the loop); throws the failure, if that was the end.
  package func wait(thenDeregister registration: EventLoop.Registration, from loop: EventLoop)
    async throws(SystemCallError)
  {
    var failure: SystemCallError?
    await withGracefulShutdownHandler {
      await withTaskCancellationHandler {
        for await error in failures {
          failure = error
          break
        }
      } onCancel: {
        failed.finish()
      }
    } onGracefulShutdown: {
      failed.finish()
    }
    await loop.submit { loop.deregister(registration) }
    if let failure { throw failure }
  }
}
