import Locking
import Logging

/// Everything a run printed, as the daemon keeps it: each line logged (escaped, truncated,
/// rate-limited), the last lines of both streams, and the last lines of stderr alone.
final class RunOutput: Sendable {
  /// Which pipe a line came from.
  enum Stream: String, Sendable {
    case stdout
    case stderr
  }

  private struct State {
    var tail = OutputTail()
    var errorTail = OutputTail(maxLines: 5, maxLineLength: 200)
    var limiter: LogRateLimiter
    var metadata: Logger.Metadata
  }

  private let state: Lock<State>
  private let logger: Logger
  private let now: @Sendable () -> Duration

  init(
    logger: Logger, metadata: Logger.Metadata, limiter: LogRateLimiter,
    now: @escaping @Sendable () -> Duration
  ) {
    state = Lock(State(limiter: limiter, metadata: metadata))
    self.logger = logger
    self.now = now
  }

  /// Logs `line` unless the run is over its rate, and keeps it in the tails.
  func add(_ line: OutputLineSplitter.Line, from stream: Stream) {
    let text = line.text
    let time = now()
    let (allowed, suppressed, metadata) = state.withLock { state in
      state.tail.append(text)
      if stream == .stderr { state.errorTail.append(text) }
      let (allowed, suppressed) = state.limiter.admit(at: time)
      return (allowed, suppressed, state.metadata)
    }
    if suppressed > 0 { reportSuppressed(suppressed, metadata) }
    if allowed {
      logger.info("\(text)", metadata: metadata.merging(["stream": "\(stream.rawValue)"]) { $1 })
    }
  }

  /// Reports lines still suppressed when the run ends.
  func finish() {
    let (suppressed, metadata) = state.withLock { ($0.limiter.takeSuppressed(), $0.metadata) }
    if suppressed > 0 { reportSuppressed(suppressed, metadata) }
  }

  /// Adds the started process's pid to what every line is logged with.
  func started(pid: Int32) {
    state.withLock { $0.metadata["pid"] = "\(pid)" }
  }

  /// The last lines of both streams, interleaved as they arrived.
  var tail: String { state.withLock { $0.tail.text } }

  /// The last lines of stderr.
  var errorTail: String { state.withLock { $0.errorTail.text } }

  private func reportSuppressed(_ count: Int, _ metadata: Logger.Metadata) {
    logger.warning(
      "output rate limit: \(count) line(s) not logged", metadata: metadata)
  }
}
