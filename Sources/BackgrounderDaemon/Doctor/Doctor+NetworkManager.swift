import Backgrounder
import Logging
import NetworkHints
import Reachability

extension Doctor {
  /// `doctor`'s own reading of NetworkManager when no daemon runs (a running daemon reports
  /// its sources in its health): answered, not on the bus, or on the bus but silent past
  /// `[network] source-timeout` — the last is a problem, as in `status`.
  package static func networkManagerFindings(_ configuration: NetworkHintsConfiguration) async
    -> [DoctorFinding]
  {
    guard configuration.useNetworkManager else {
      return [.init(.note, "networkmanager", "off in the config ([network] networkmanager)")]
    }
    var hintsConfiguration = configuration
    hintsConfiguration.watchWifi = false
    let logger = Logger(label: "backgrounder.doctor") { _ in SwiftLogNoOpLogHandler() }
    let monitor = ReachabilityMonitor(configuration: ReachabilityConfiguration(), logger: logger)
    let service = NetworkHintsService(
      monitor: monitor, configuration: hintsConfiguration, logger: logger)
    let running = Task { try await service.run() }
    await service.settled()
    let hints = monitor.hints
    running.cancel()
    switch hints.sources[.networkManager] {
    case .answered:
      let devices = hints.networkManagerMetered.count
      return [
        .init(
          .ok, "networkmanager",
          "answers: connectivity \(hints.networkManagerConnectivity.rawValue), metered "
            + "settings for \(devices) interface(s)")
      ]
    case .timedOut:
      return [
        .init(
          .problem, "networkmanager",
          "on the bus but did not answer within \(HumanText.duration(configuration.sourceTimeout)); treated as "
            + "absent (kernel signals decide)")
      ]
    default:
      return [
        .init(.note, "networkmanager", "not on the system bus: kernel signals decide metered")
      ]
    }
  }
}
