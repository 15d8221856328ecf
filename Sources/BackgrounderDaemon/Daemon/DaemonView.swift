import Foundation
import PowerSource
import Reachability

/// The running daemon's own view of the network and power, as its jobs are gated by it:
/// `status` shows it, labelled as the daemon's, when the client's view can differ (issue #34:
/// a client in another network namespace saw its own uplink beside tasks waiting for the
/// daemon's).
package struct DaemonView: Sendable, Equatable, Codable {
  /// The daemon's network namespace (`net:[INODE]`, the link `/proc/self/ns/net`), nil if
  /// unreadable.
  package var networkNamespace: String?
  /// Whether the daemon has a usable default route.
  package var reachable: Bool
  /// Its primary link's name and type (`ethernet`, `wifi`, …), when reachable.
  package var primaryLink: String?
  package var primaryLinkType: String?
  /// Whether the daemon treats the network as metered, and why (in words).
  package var metered: Bool
  package var meteredReason: String?
  /// The daemon's power view.
  package var externalPower: Bool
  package var charging: Bool
  package var batteryPercent: Double?
  package var batteryLow: Bool

  /// The view of `network` and `power` in this process's network namespace.
  package init(network: NetworkStatus, power: PowerStatus) {
    networkNamespace = Self.currentNetworkNamespace()
    reachable = network.isReachable
    let primary = network.primaryLink
    primaryLink = primary?.name
    primaryLinkType = primary?.type.rawValue
    metered = network.isDataMetered
    meteredReason = primary.map { "\($0.meteredReason)" }
    externalPower = power.externalPower
    charging = power.charging
    batteryPercent = power.batteryPercent
    batteryLow = power.batteryLow
  }

  /// `net:[INODE]` of the calling thread's network namespace, nil if unreadable.
  package static func currentNetworkNamespace() -> String? {
    try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self/ns/net")
  }
}
