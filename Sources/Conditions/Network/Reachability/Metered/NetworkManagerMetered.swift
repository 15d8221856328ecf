/// NetworkManager's `Device.Metered` value (`NMMetered`): what the user set on the connection
/// (`yes`/`no`) or what NetworkManager guessed (`guess-yes`/`guess-no`, e.g. from Android's
/// `ANDROID_METERED` DHCP option or an Apple hotspot beacon).
public enum NetworkManagerMetered: String, Sendable, Equatable, Hashable, CaseIterable {
  /// No opinion.
  case unknown
  /// The user marked the connection metered.
  case yes
  /// The user marked the connection not metered.
  case no
  /// NetworkManager guessed metered.
  case guessYes = "guess-yes"
  /// NetworkManager guessed not metered.
  case guessNo = "guess-no"

  /// Creates the value from the D-Bus `u` number; `nil` when out of range.
  public init?(networkManagerValue value: UInt32) {
    switch value {
    case 0: self = .unknown
    case 1: self = .yes
    case 2: self = .no
    case 3: self = .guessYes
    case 4: self = .guessNo
    default: return nil
    }
  }

  /// The explicit setting (`yes`/`no`) as metered or not; `nil` for guesses and unknown.
  public var explicitValue: Bool? {
    switch self {
    case .yes: true
    case .no: false
    case .unknown, .guessYes, .guessNo: nil
    }
  }

  /// The guess (`guess-yes`/`guess-no`) as metered or not; `nil` otherwise.
  public var guessedValue: Bool? {
    switch self {
    case .guessYes: true
    case .guessNo: false
    case .unknown, .yes, .no: nil
    }
  }
}
