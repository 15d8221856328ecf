import ServiceLifecycle

/// One long-running part of the daemon (network monitor, control socket, runtime, …) as a
/// `Service` of the daemon's single `ServiceGroup`. Whatever ends it outside a shutdown —
/// an error, or returning at all — ends the whole group gracefully (running jobs are cancelled
/// and recorded as retry) with a ``DaemonPartFailure`` naming the part, so `run` exits ≠ 0.
package struct DaemonPart: Service {
  /// The name in logs and errors: "control socket", "network monitor", ….
  package let name: String
  package let body: @Sendable () async throws -> Void

  package init(_ name: String, body: @escaping @Sendable () async throws -> Void) {
    self.name = name
    self.body = body
  }

  /// A part that runs `body` until a graceful shutdown cancels it.
  package static func untilShutdown(
    _ name: String, body: @escaping @Sendable () async throws -> Void
  ) -> DaemonPart {
    DaemonPart(name) { try await cancelWhenGracefulShutdown(body) }
  }

  package func run() async throws {
    do {
      try await body()
    } catch {
      if isStopping && error is CancellationError { return }
      throw DaemonPartFailure(part: name, reason: "\(error)")
    }
    guard isStopping else { throw DaemonPartFailure(part: name, reason: "stopped unexpectedly") }
  }

  private var isStopping: Bool { Task.isShuttingDownGracefully || Task.isCancelled }

  /// How the group treats this part: any end of it shuts the group down gracefully.
  package var configuration: ServiceGroupConfiguration.ServiceConfiguration {
    ServiceGroupConfiguration.ServiceConfiguration(
      service: self, successTerminationBehavior: .gracefullyShutdownGroup,
      failureTerminationBehavior: .gracefullyShutdownGroup, serviceName: name)
  }
}

/// A daemon part failed or stopped on its own; the daemon stopped because of it.
package struct DaemonPartFailure: Error, CustomStringConvertible, Equatable {
  /// The part: "control socket", "network monitor", ….
  package var part: String
  /// What went wrong.
  package var reason: String

  package init(part: String, reason: String) {
    self.part = part
    self.reason = reason
  }

  package var description: String { "\(part): \(reason)" }
}
