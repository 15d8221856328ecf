import ArgumentParser
import BackgrounderDaemon
import Logging

/// How a state-changing verb reaches the jobs: through the running daemon's control socket, or,
/// when no daemon runs, by editing the store directly.
enum DaemonConnection {
  /// Sends `request` to the daemon of `configuration`. Returns nil when no daemon is running.
  static func send(
    _ request: ControlRequest, _ configuration: DaemonConfiguration
  ) async throws -> ControlResponse? {
    do {
      return try await ControlClient(path: configuration.controlSocketPath).send(request)
    } catch .noDaemon {
      return nil
    } catch {
      throw OperatorError("\(error)")
    }
  }

  /// Prints the daemon's answer; a refusal becomes exit status 1.
  static func report(_ response: ControlResponse) throws {
    if response.ok {
      print(response.message)
    } else {
      Output.error(response.message)
      throw ExitCode.failure
    }
  }

  static let logger = Logger(label: "backgrounder.cli") {
    StreamLogHandler.standardError(label: $0)
  }
}
