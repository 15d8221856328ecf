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

  /// Sends `request` to the daemon of `configuration` on the calling thread (a synchronous
  /// command's: no task, no thread started). Returns nil when no daemon is running.
  static func sendBlocking(
    _ request: ControlRequest, _ configuration: DaemonConfiguration
  ) throws -> ControlResponse? {
    do {
      return try ControlClient(path: configuration.controlSocketPath).sendBlocking(request)
    } catch .noDaemon {
      return nil
    } catch {
      throw OperatorError("\(error)")
    }
  }

  /// Sends `request` on the calling thread to the daemon of the config `config` names (nil: the
  /// default; only its control socket is read, not its jobs) and prints its answer; with no
  /// daemon running, fails with `noDaemon(socketPath)`.
  static func requestBlocking(
    _ request: ControlRequest, config: String?, noDaemon: (String) -> String
  ) throws {
    let configuration = try ConfigOption.load(config, decodingJobs: false)
    guard let response = try sendBlocking(request, configuration) else {
      throw OperatorError(noDaemon(configuration.controlSocketPath))
    }
    try report(response)
  }

  /// Sends `request` to the daemon of `configuration` and prints its answer; with no daemon
  /// running, runs `offline` (an edit of the store) instead. A daemon that holds the store
  /// without answering yet, or starts before the edit begins, goes first (see ``StoreLock``):
  /// the request then waits, up to `wait`, for it to answer.
  static func send(
    _ request: ControlRequest, _ configuration: DaemonConfiguration,
    wait: Duration = .seconds(60), orEdit offline: () async throws -> Void
  ) async throws {
    let deadline = ContinuousClock.now.advanced(by: wait)
    var pause = Duration.milliseconds(10)
    while true {
      if let response = try await send(request, configuration) {
        return try report(response)
      }
      do {
        return try await offline()
      } catch let starting as DaemonHoldsStore {
        guard ContinuousClock.now < deadline else { throw OperatorError("\(starting)") }
      }
      try await Task.sleep(for: pause)
      pause = min(pause * 2, .milliseconds(200))
    }
  }

  /// Prints the daemon's answer; a refusal becomes exit status 1.
  static func report(_ response: ControlResponse) throws {
    if response.ok {
      Output.line(response.message)
    } else {
      Output.error(response.message)
      throw ExitCode.failure
    }
  }

  static let logger = Logger(label: "backgrounder.cli") {
    StreamLogHandler.standardError(label: $0)
  }
}
