import Logging
import Subprocess

#if canImport(System)
  import System
#else
  import SystemPackage
#endif

/// How a command run ended.
public struct CommandOutcome: Sendable, Equatable {
  /// Why the process is gone.
  public enum Termination: Sendable, Equatable {
    /// It exited with this status.
    case exited(Int32)
    /// A signal ended it (for example SIGKILL after the grace period).
    case signaled(Int32)
    /// It never started (program not found, not executable, bad working directory).
    case failedToStart(String)
  }

  public var termination: Termination
  /// The last lines it printed on stdout and stderr, interleaved as they arrived.
  public var outputTail: String
}

/// Runs an argv directly (no shell) in its own session and process group, logging every output
/// line with the job id. Cancelling the calling task sends SIGTERM to the whole process group,
/// then SIGKILL after `gracePeriod`.
public struct CommandRunner: Sendable {
  /// Time between SIGTERM and SIGKILL when the run is cancelled.
  public var gracePeriod: Duration
  public var logger: Logger

  public init(gracePeriod: Duration = .seconds(5), logger: Logger) {
    self.gracePeriod = gracePeriod
    self.logger = logger
  }

  /// Runs `argv` with the daemon's environment plus `environment`, returning once the process
  /// (and, on cancellation, its process group) is gone.
  public func run(
    argv: [String], environment: [String: String], workingDirectory: String?, jobID: String
  ) async -> CommandOutcome {
    guard let program = argv.first else {
      return CommandOutcome(termination: .failedToStart("empty command"), outputTail: "")
    }
    let executable: Executable =
      program.contains("/") ? .path(FilePath(program)) : .name(program)
    var overrides: [Environment.Key: String?] = [:]
    for (name, value) in environment {
      if let key = Environment.Key(rawValue: name) { overrides[key] = value }
    }
    var options = PlatformOptions()
    options.createSession = true
    options.teardownSequence = [
      .gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: gracePeriod),
      .send(signal: .kill, toProcessGroup: true, allowedDurationToNextStep: .seconds(1)),
    ]
    let tail = SharedOutputTail()
    var metadata: Logger.Metadata = ["job": "\(jobID)"]
    do {
      let result = try await Subprocess.run(
        executable,
        arguments: Arguments(Array(argv.dropFirst())),
        environment: .inherit.updating(overrides),
        workingDirectory: workingDirectory.map { FilePath($0) },
        platformOptions: options,
        input: .none,
        output: .sequence,
        error: .sequence
      ) { execution in
        metadata["pid"] = "\(execution.processIdentifier.value)"
        let lineMetadata = metadata
        await withTaskGroup(of: Void.self) { group in
          group.addTask {
            await drain(execution.standardOutput, stream: "stdout", metadata: lineMetadata, tail)
          }
          group.addTask {
            await drain(execution.standardError, stream: "stderr", metadata: lineMetadata, tail)
          }
        }
      }
      let termination: CommandOutcome.Termination =
        switch result.terminationStatus {
        case .exited(let code): .exited(code)
        case .signaled(let signal): .signaled(signal)
        }
      return CommandOutcome(termination: termination, outputTail: tail.text)
    } catch {
      logger.error(
        "command could not be started", metadata: metadata.merging(["error": "\(error)"]) { $1 })
      return CommandOutcome(
        termination: .failedToStart("\(program): \(error)"), outputTail: tail.text)
    }
  }

  private func drain(
    _ output: SubprocessOutputSequence, stream: String, metadata: Logger.Metadata,
    _ tail: SharedOutputTail
  ) async {
    var lineMetadata = metadata
    lineMetadata["stream"] = "\(stream)"
    do {
      for try await line in output.strings() {
        logger.info("\(line)", metadata: lineMetadata)
        tail.append(line)
      }
    } catch {
      logger.warning(
        "lost command output", metadata: lineMetadata.merging(["error": "\(error)"]) { $1 })
    }
  }
}
