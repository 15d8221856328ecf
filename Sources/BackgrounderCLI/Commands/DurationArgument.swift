import ArgumentParser
import BackgrounderDaemon

/// A duration flag value: `30s`, `10m`, `4h`, `1d`, `1h30m`.
struct DurationArgument: ExpressibleByArgument {
  let value: Duration

  init?(argument: String) {
    guard let value = try? DurationParser.parse(argument) else { return nil }
    self.value = value
  }

  /// Parses `text`, throwing the parser's explanation ("too large", "expected a unit", …); for
  /// `@Option(transform:)`, so that the message reaches the user.
  static func parse(_ text: String) throws -> DurationArgument {
    DurationArgument(value: try DurationParser.parse(text))
  }

  private init(value: Duration) {
    self.value = value
  }

  static var defaultCompletionKind: CompletionKind { .list(["30s", "10m", "1h", "4h", "1d"]) }
}

extension JobDefinition.Network: ExpressibleByArgument {}
extension JobDefinition.Backoff.Policy: ExpressibleByArgument {}
