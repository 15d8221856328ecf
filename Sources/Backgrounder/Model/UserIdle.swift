import Foundation

/// What happens to a run still going when the user comes back (`requiresIdle`): config key
/// `on-user-return`.
public enum UserReturnPolicy: String, Hashable, Sendable, Codable, CaseIterable {
  /// Let it finish: the idle requirement holds at the start only (the default).
  case `continue`
  /// Freeze it as ``ConditionLossPolicy/pause(max:)`` does, and thaw it once the user has been
  /// idle long enough again (for at most the task's `pause-max`, else one hour).
  case pause
  /// Stop it as for a lost condition (a retry, no attempt used): it runs again once the user
  /// has been idle long enough again.
  case stop
}

/// What the dispatcher knows about the user's idleness (`requiresIdle`): on Linux, logind's
/// `IdleHint` and `IdleSinceHint`. Unknown is not permission: while ``unknown`` says why it is
/// not known, the user counts as not idle.
public struct UserIdleConditions: Hashable, Sendable {
  /// Since when the user has been idle; `nil` while the user is active (or it is not known).
  public var idleSince: Date?
  /// Why the idle state is not known ("logind not running", "no system bus"); `nil` once known.
  public var unknown: String?

  /// Creates idle conditions (`idleSince` kept to the millisecond, as the store keeps it).
  public init(idleSince: Date?, unknown: String? = nil) {
    self.idleSince =
      unknown == nil
      ? idleSince.map {
        Date(timeIntervalSince1970: ($0.timeIntervalSince1970 * 1000).rounded() / 1000)
      }
      : nil
    self.unknown = unknown
  }

  /// Known: the user is active.
  public static let active = UserIdleConditions(idleSince: nil)

  /// No idle source configured (or none answered yet): the user counts as not idle.
  public static let unconfigured = UserIdleConditions(
    idleSince: nil, unknown: "no idle source")

  /// Whether the idle state is known.
  public var isKnown: Bool { unknown == nil }

  /// Whether the user has been idle for at least `required` at `now` (and that is known).
  func isIdle(for required: Duration, at now: WallInstant) -> Bool {
    guard let idleSince else { return false }
    return WallInstant(idleSince).advanced(by: required) <= now
  }
}

/// A source of the user's idle state (on Linux, logind's idle hint watched over the system
/// bus).
public protocol UserIdleConditionSource: Sendable {
  /// The conditions right now.
  var current: UserIdleConditions { get }
  /// What ``updates()`` returns: any sequence that never throws, consumed where it is
  /// iterated.
  associatedtype Updates: AsyncSequence<UserIdleConditions, Never> & Sendable
  /// An independent subscription per call: yields the current conditions first, then each change.
  func updates() -> Updates
}

/// The idle source of a configuration that names none: nothing is known, so work that
/// requires an idle user is held.
public struct UnconfiguredUserIdle: UserIdleConditionSource {
  /// Creates the source.
  public init() {}
  /// Always ``UserIdleConditions/unconfigured``.
  public var current: UserIdleConditions { .unconfigured }
  /// Yields ``UserIdleConditions/unconfigured`` once and never finishes.
  public func updates() -> AsyncStream<UserIdleConditions> {
    AsyncStream { $0.yield(.unconfigured) }
  }
}

extension WorkConstraints {
  /// The idle predicate `idle` leaves unmet at `now` (also while it is not known).
  func unmetIdle(_ idle: UserIdleConditions, at now: WallInstant) -> [PendingPredicate] {
    guard let required = requiresIdle, !idle.isIdle(for: required, at: now) else { return [] }
    return [.userIdle(required: required, idleSince: idle.idleSince, unknown: idle.unknown)]
  }
}

extension PendingPredicate {
  /// "the user idle for 10 min (idle 3 min so far)", "(the user is active)" or "(not known: logind
  /// not running)", with `now` the time it is shown at.
  public static func userIdlePhrase(
    required: Duration, idleSince: Date?, unknown: String?, now: Date
  ) -> String {
    let state: String
    if let unknown {
      state = "not known: \(unknown)"
    } else if let idleSince {
      let idle = max(0, now.timeIntervalSince(idleSince)).rounded(.down)
      state = "idle \(HumanText.duration(seconds: idle)) so far"
    } else {
      state = "the user is active"
    }
    return "the user idle for \(HumanText.duration(required)) (\(state))"
  }
}
