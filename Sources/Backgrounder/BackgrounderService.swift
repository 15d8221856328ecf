import ServiceLifecycle

extension Backgrounder: Service {
  /// Starts the runtime and keeps it running until graceful shutdown or cancellation, then
  /// shuts it down (running workers become retries).
  public func run() async throws {
    try await start()
    try? await gracefulShutdown()
    // Shut down outside the (possibly cancelled) caller so clocks and the store still work.
    await Task { await self.shutdown() }.value
  }
}
