import Foundation
import Locking
import Logging
import Testing

@testable import BackgrounderDaemon

/// Output never blocks a job: long lines, floods, control characters, and the stderr tail in
/// the result.
@Suite(.timeLimit(.minutes(3)))
struct CommandOutputTests {
  @Test func aMegabyteLineDoesNotStallTheJob() async {
    let (logger, lines) = LogCapture.make()
    let runner = CommandRunner(gracePeriod: .milliseconds(300), logger: logger)
    let outcome = await runner.run(
      argv: ["/bin/sh", "-c", "head -c 1048576 /dev/zero | tr '\\0' x; echo; echo done"],
      environment: ["PATH": "/usr/bin:/bin"], workingDirectory: nil, jobID: "a.b")
    #expect(outcome.termination == .exited(0))
    #expect(
      outcome.outputTail.hasSuffix("\ndone"),
      "every byte was read: \(outcome.outputTail.suffix(80))")
    let logged = lines.withLock { $0 }
    let long = logged.first { $0.hasPrefix("xxxx") }
    #expect(long?.hasSuffix("… [truncated \(1_048_576 - 4096) bytes]") == true)
    #expect(long.map { $0.utf8.count < 4200 } == true, "the logged line is bounded")
  }

  @Test func chattyJobIsRateLimitedAndSaysHowManyLinesWereSuppressed() async {
    let (logger, lines) = LogCapture.make()
    var runner = CommandRunner(gracePeriod: .milliseconds(300), logger: logger)
    runner.logBurst = 10
    runner.logLinesPerSecond = 1
    let outcome = await runner.run(
      argv: ["/bin/sh", "-c", "i=0; while [ $i -lt 1000 ]; do echo line $i; i=$((i+1)); done"],
      environment: [:], workingDirectory: nil, jobID: "a.b")
    #expect(outcome.termination == .exited(0))
    #expect(outcome.outputTail.hasSuffix("line 999"), "the tail still has the last lines")
    let logged = lines.withLock { $0 }
    let jobLines = logged.filter { $0.hasPrefix("line ") }
    #expect(jobLines.count >= 10 && jobLines.count < 50, "\(jobLines.count) lines logged")
    let suppressed = logged.compactMap { line -> Int? in
      guard line.hasPrefix("output rate limit: ") else { return nil }
      return Int(line.dropFirst("output rate limit: ".count).prefix { $0.isNumber })
    }
    #expect(jobLines.count + suppressed.reduce(0, +) == 1000, "\(suppressed)")
  }

  @Test func controlCharactersAreEscapedInTheLog() async {
    let (logger, lines) = LogCapture.make()
    let runner = CommandRunner(gracePeriod: .milliseconds(300), logger: logger)
    _ = await runner.run(
      argv: ["/bin/sh", "-c", "printf 'red \\033[31mtext\\r\\tend\\n'"],
      environment: [:], workingDirectory: nil, jobID: "a.b")
    #expect(lines.withLock { $0 }.contains("red \\u{1B}[31mtext\\u{D}\tend"))
  }

  @Test func retryAndFailureReasonsCarryTheStderrTail() async {
    let runner = CommandRunner(
      gracePeriod: .milliseconds(300), logger: Logger(label: "test.output"))
    let busy = await runner.run(
      argv: ["/bin/sh", "-c", "echo progress; echo 'server busy' >&2; exit 75"],
      environment: [:], workingDirectory: nil, jobID: "a.b")
    #expect(CommandWorker.result(of: busy) == .retry(reason: "exit 75: server busy"))
    let failed = await runner.run(
      argv: ["/bin/sh", "-c", "echo 'disk full' >&2; exit 3"],
      environment: [:], workingDirectory: nil, jobID: "a.b")
    #expect(CommandWorker.result(of: failed) == .failure(reason: "exit status 3: disk full"))
  }

  @Test func longLinesAreCutWithAMarker() {
    var splitter = OutputLineSplitter(maxLineLength: 4)
    let lines = splitter.append(Array("abcdefg\nhi\nlast".utf8))
    #expect(lines.map(\.text) == ["abcd… [truncated 3 bytes]", "hi"])
    #expect(splitter.finish()?.text == "last")
    #expect(splitter.finish() == nil)
    #expect(splitter.append(Array("ab".utf8)).isEmpty)
    #expect(splitter.append(Array("cdef".utf8)).isEmpty)
    #expect(splitter.append(Array("g\n\n".utf8)).map(\.text) == ["abcd… [truncated 3 bytes]", ""])
  }

  @Test func rateLimiterRefillsOverTimeAndReportsAtMostOncePerInterval() {
    var limiter = LogRateLimiter(burst: 2, linesPerSecond: 10, reportInterval: .seconds(1))
    #expect(limiter.admit(at: .zero) == (true, 0))
    #expect(limiter.admit(at: .zero) == (true, 0))
    #expect(limiter.admit(at: .zero) == (false, 0))
    #expect(limiter.admit(at: .milliseconds(50)) == (false, 0))
    #expect(limiter.admit(at: .milliseconds(100)) == (true, 0), "one token, report not due")
    #expect(limiter.admit(at: .milliseconds(100)) == (false, 0))
    #expect(limiter.admit(at: .seconds(1)) == (true, 3), "report due after 1 s")
    #expect(limiter.admit(at: .seconds(1)) == (true, 0))
    #expect(limiter.takeSuppressed() == 0)
  }
}

/// Messages a `LogCapture` kept.
final class CapturedLines: Sendable {
  private let lines = Lock<[String]>([])

  func append(_ line: String) { lines.withLock { $0.append(line) } }

  func withLock<T>(_ body: ([String]) -> T) -> T { lines.withLock { body($0) } }
}

/// A swift-log handler that keeps each message, for the tests that check what was logged.
struct LogCapture: LogHandler {
  let lines: CapturedLines
  var metadata: Logger.Metadata = [:]
  var logLevel: Logger.Level = .trace

  static func make() -> (Logger, CapturedLines) {
    let lines = CapturedLines()
    return (Logger(label: "test.capture") { _ in LogCapture(lines: lines) }, lines)
  }

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  func log(event: LogEvent) {
    lines.append("\(event.message)")
  }
}
