/// Constraints that relax once a due task has waited long enough for them (`relax-after` and
/// `relax = { … }` in the daemon's config; Android 14 relaxes constraints as a deadline nears).
///
/// The wait starts at the task's due time and restarts after a successful run. Once it reaches
/// ``after``, the task's network requirement, power keys and allow-list become the values here;
/// its windows, required mount and required destination are never relaxed. The run that starts
/// relaxed is told so (``WorkContext/relaxed``) and its history entry says what it waited for.
public struct ConstraintRelaxation: Hashable, Sendable, Codable {
  /// How long a due task waits for its full constraints before they relax.
  public var after: Duration
  /// The network requirement once relaxed.
  public var networkRequired: NetworkRequirement
  /// Whether external power is still required once relaxed.
  public var requiresCharging: Bool
  /// Whether a battery that is not low is required once relaxed.
  public var requiresBatteryNotLow: Bool
  /// The networks allowed once relaxed (the default allows any).
  public var allowedNetworks: NetworkAllowList

  /// Creates a relaxation with explicit relaxed values.
  public init(
    after: Duration, networkRequired: NetworkRequirement, requiresCharging: Bool,
    requiresBatteryNotLow: Bool, allowedNetworks: NetworkAllowList = .any
  ) {
    self.after = after
    self.networkRequired = networkRequired
    self.requiresCharging = requiresCharging
    self.requiresBatteryNotLow = requiresBatteryNotLow
    self.allowedNetworks = allowedNetworks
  }

  /// The default relaxation of `constraints` after `after`: an `unmetered` network becomes
  /// `not-roaming`, `requiresCharging` becomes `requiresBatteryNotLow`, the allow-list of
  /// Wi-Fi networks and interfaces is dropped; the rest is kept.
  public static func defaults(after: Duration, for constraints: WorkConstraints) -> Self {
    Self(
      after: after,
      networkRequired: constraints.networkRequired == .unmetered
        ? .notRoaming : constraints.networkRequired,
      requiresCharging: false,
      requiresBatteryNotLow: constraints.requiresBatteryNotLow || constraints.requiresCharging,
      allowedNetworks: .any)
  }
}

extension WorkConstraints {
  /// These constraints once relaxed (``relaxation``): the same when there is none. Windows,
  /// the required mount and the required destination are kept.
  public var relaxed: WorkConstraints {
    guard let relaxation else { return self }
    var relaxed = self
    relaxed.networkRequired = relaxation.networkRequired
    relaxed.requiresCharging = relaxation.requiresCharging
    relaxed.requiresBatteryNotLow = relaxation.requiresBatteryNotLow
    relaxed.allowedNetworks = relaxation.allowedNetworks
    relaxed.requiresIdle = nil
    relaxed.relaxation = nil
    return relaxed
  }

  /// What a task with these constraints waited for that the relaxation drops, in words ("an
  /// unmetered network", "charging"), given what was unmet when it relaxed.
  func relaxedWaitPhrase(unmet: [PendingPredicate]) -> String {
    let relaxed = self.relaxed
    var parts: [String] = []
    for predicate in unmet {
      let phrase: String? =
        switch predicate {
        case .networkRequired(let requirement) where requirement != relaxed.networkRequired:
          Self.networkPhrase(requirement)
        case .notRoaming where relaxed.networkRequired != .notRoaming:
          "a network that is not roaming"
        case .requiresCharging where !relaxed.requiresCharging: "charging"
        case .requiresBatteryNotLow where !relaxed.requiresBatteryNotLow:
          "a battery that is not low"
        case .wifiNetwork(let allowed, _) where relaxed.allowedNetworks.ssids.isEmpty:
          "Wi-Fi network \(allowed.joined(separator: ", "))"
        case .networkInterface(let allowed, _) where relaxed.allowedNetworks.interfaces.isEmpty:
          "interface \(allowed.joined(separator: ", "))"
        case .userIdle(let required, _, _): "the user idle for \(HumanText.duration(required))"
        default: nil
        }
      if let phrase, !parts.contains(phrase) { parts.append(phrase) }
    }
    if parts.isEmpty { return "its conditions" }
    return parts.joined(separator: " and ")
  }

  private static func networkPhrase(_ requirement: NetworkRequirement) -> String {
    switch requirement {
    case .none: "no network"
    case .any: "a network"
    case .unmetered: "an unmetered network"
    case .notRoaming: "a network that is not roaming"
    }
  }
}
