/// One thing that must be known before the daemon tells systemd `READY=1`: the control socket
/// listens, a network status with every source answered or timed out arrived, ….
package struct ReadinessCondition: Sendable {
  /// What is waited for, for logs.
  package let name: String
  private let isMet: @Sendable () async -> Bool

  /// Met by the first element of `stream`; never met when the stream ends first (the part
  /// feeding it failed) or the waiting task is cancelled.
  package static func firstElement<Element: Sendable>(
    of stream: AsyncStream<Element>, _ name: String,
    where isWanted: @escaping @Sendable (Element) -> Bool = { _ in true }
  ) -> ReadinessCondition {
    ReadinessCondition(name: name) {
      for await element in stream where isWanted(element) { return !Task.isCancelled }
      return false
    }
  }

  private init(name: String, isMet: @escaping @Sendable () async -> Bool) {
    self.name = name
    self.isMet = isMet
  }

  /// Waits for every condition in turn; returns the name of the first one that can never be
  /// met, or nil once all are met.
  package static func firstUnmet(_ conditions: [ReadinessCondition]) async -> String? {
    for condition in conditions {
      guard await condition.isMet() else { return condition.name }
    }
    return nil
  }
}
