import Backgrounder
import EventLoops
import Foundation
import Logging
import NetworkHints
import PowerSource
import Reachability
import ServiceLifecycle

/// Every live Linux condition source, wired exactly as the `backgrounder` daemon wires them
/// (the daemon uses this type): rtnetlink (``ReachabilityMonitor``), NetworkManager over D-Bus
/// and nl80211 SSIDs (``NetworkHintsService``), the opt-in connectivity probe
/// (``ConnectivityProber``), power (``PowerProbe``), wall-clock changes
/// (``WallClockChangeMonitor``), mounts, reachable destinations and the user's idle state
/// (systemd-logind, ``LogindIdleWatch``).
///
/// One import, one line:
///
/// ```swift
/// let sources = LinuxConditionSources(logger: logger)
/// let runtime = Backgrounder(configuration: sources.configuration(storePath: path))
/// // run `sources` (a Service) alongside the runtime, e.g. in a ServiceGroup
/// ```
///
/// Unknown is not permission: until NetworkManager and nl80211 have answered (or are known
/// absent, or timed out), the runtime's network conditions are unknown and no work that needs
/// the network starts.
public final class LinuxConditionSources: Service, Sendable {
  /// What to watch and how.
  public struct Options: Sendable {
    /// The monitor's settings (interface and SSID overrides, sysfs root, namespace).
    public var reachability: ReachabilityConfiguration
    /// NetworkManager and nl80211 (source timeout, stale-hints limit, bus address).
    public var hints: NetworkHintsConfiguration
    /// The opt-in HTTP connectivity probe; `nil`: none.
    public var connectivityCheck: ConnectivityCheck?
    /// Root of the sysfs tree for power supplies.
    public var sysfsRoot: String
    /// Follow systemd-logind's idle hint for `requiresIdle` (a system-bus connection); without
    /// it the user's idle state is never known and such work never runs.
    public var watchesUserIdle: Bool
    /// The bus to find systemd-logind on (its idle hint, the inhibitor locks); nil: the system
    /// bus (`DBUS_SYSTEM_BUS_ADDRESS` when set).
    public var logindBusAddress: String?
    /// Who holds the inhibitor locks of ``LinuxConditionSources/holdingInhibitors(from:_:)``'s runs,
    /// as systemd-logind lists them (`systemd-inhibit --list`'s WHO): the application's name.
    public var inhibitorWho: String

    /// Creates options; the defaults watch the live system as the daemon does.
    public init(
      reachability: ReachabilityConfiguration = ReachabilityConfiguration(),
      hints: NetworkHintsConfiguration = NetworkHintsConfiguration(),
      connectivityCheck: ConnectivityCheck? = nil, sysfsRoot: String = "/sys",
      watchesUserIdle: Bool = true, logindBusAddress: String? = nil,
      inhibitorWho: String = "backgrounder"
    ) {
      self.reachability = reachability
      self.hints = hints
      self.connectivityCheck = connectivityCheck
      self.sysfsRoot = sysfsRoot
      self.watchesUserIdle = watchesUserIdle
      self.logindBusAddress = logindBusAddress
      self.inhibitorWho = inhibitorWho
    }
  }

  /// The rtnetlink monitor; its status carries every hint source's state.
  public let monitor: ReachabilityMonitor
  /// The power-supply probe.
  public let powerProbe: PowerProbe
  /// Wall-clock steps and resumes from suspend.
  public let clockChanges: WallClockChangeMonitor
  /// The mount points of this process's mount namespace (`requiresMount`).
  public let mounts: MountTableMonitor
  /// The `requires-reachable` destinations, checked over the primary link
  /// (``DestinationMonitor/watch(_:)`` names them).
  public let destinations: DestinationMonitor
  /// The user's idle state (`requiresIdle`), nil when ``Options/watchesUserIdle`` is off.
  public let userIdle: LogindIdleWatch?
  /// systemd-logind's sleep and shutdown inhibitor locks, held while runs go
  /// (``holdingInhibitors(from:_:)``; the daemon's command runs hold them through it too).
  package let inhibitor: SleepInhibitor
  /// The loop the sources were given (nil: each uses the process's shared loop).
  let eventLoop: EventLoop?
  /// Where systemd-logind is found (``Options/logindBusAddress``).
  let logindBusAddress: String?
  let logger: Logger
  /// One long-running part: its name, its service, and when it ends in a host's shutdown.
  public struct Part: Sendable {
    /// When a part ends in a host's shutdown.
    public enum Ending: Sendable, Equatable {
      /// At the shutdown signal: nothing that stops runs needs it (the hint sources).
      case atShutdownSignal
      /// When cancelled, after the runtime has stopped its runs: the runtime reads it until
      /// then (network, power, clock, mounts, destinations).
      case whenCancelled
    }

    /// "network monitor", "network hints", …
    public let name: String
    public let service: any Service
    public let ending: Ending
  }

  /// The long-running parts, in start order: ``run()`` runs them all; a host that names its
  /// parts (the daemon) runs them itself, each ending as ``Part/ending`` says.
  public let parts: [Part]

  /// Creates the sources; nothing is watched until ``run()`` (or each of ``parts`` runs). The
  /// hint sources count as waiting from here on. The clock-change timer, the uevent socket, the
  /// D-Bus connection and the nl80211 socket are watched by `eventLoop` (the host's loop),
  /// or by the process's shared loop (`EventLoop.shared()`).
  public init(options: Options = Options(), eventLoop: EventLoop? = nil, logger: Logger) {
    monitor = ReachabilityMonitor(configuration: options.reachability, logger: logger)
    // On a shared loop, the uevent socket is watched there; one that cannot be opened here is
    // opened (and its failure logged) by the probe. The kernel drops other subsystems' uevents.
    powerProbe = PowerProbe(
      sysfsRoot: options.sysfsRoot, logger: logger,
      uevents: eventLoop.flatMap {
        try? NetlinkUeventSocket(subsystem: PowerProbe.subsystem, eventLoop: $0)
      })
    clockChanges = WallClockChangeMonitor(logger: logger, eventLoop: eventLoop)
    mounts = MountTableMonitor(logger: logger, eventLoop: eventLoop)
    destinations = DestinationMonitor(network: monitor, eventLoop: eventLoop, logger: logger)
    userIdle =
      options.watchesUserIdle
      ? LogindIdleWatch(eventLoop: eventLoop, address: options.logindBusAddress, logger: logger)
      : nil
    inhibitor = SleepInhibitor(
      address: options.logindBusAddress, who: options.inhibitorWho, logger: logger)
    self.eventLoop = eventLoop
    logindBusAddress = options.logindBusAddress
    self.logger = logger
    var parts: [Part] = [
      Part(name: "network monitor", service: monitor, ending: .whenCancelled),
      Part(
        name: "network hints",
        service: NetworkHintsService(
          monitor: monitor, configuration: options.hints, logger: logger, eventLoop: eventLoop),
        ending: .atShutdownSignal),
    ]
    if let check = options.connectivityCheck {
      parts.append(
        Part(
          name: "connectivity probe",
          service: ConnectivityProber(
            monitor: monitor, check: check,
            networkNamespacePath: options.reachability.networkNamespacePath, logger: logger),
          ending: .atShutdownSignal))
    }
    parts += [
      Part(name: "power probe", service: powerProbe, ending: .whenCancelled),
      Part(name: "clock-change monitor", service: clockChanges, ending: .whenCancelled),
      Part(name: "mount table monitor", service: mounts, ending: .whenCancelled),
      Part(name: "destination monitor", service: destinations, ending: .whenCancelled),
    ]
    if let userIdle {
      parts.append(Part(name: "logind idle watch", service: userIdle, ending: .whenCancelled))
    }
    self.parts = parts
  }

  /// The network source for the runtime.
  public var network: MonitoredNetwork { MonitoredNetwork(monitor) }
  /// The power source for the runtime.
  public var power: MonitoredPower { MonitoredPower(powerProbe) }

  /// Puts these sources into `configuration`: network, power and clock changes.
  public func configure(_ configuration: inout Backgrounder.Configuration) {
    configuration.network = network
    configuration.power = power
    configuration.clockChanges = clockChanges
    configuration.mounts = mounts
    configuration.destinations = destinations
    if let userIdle { configuration.userIdle = userIdle }
  }

  /// A runtime configuration for `storePath` with these sources and defaults for the rest.
  public func configuration(storePath: String, logger: Logger? = nil)
    -> Backgrounder.Configuration
  {
    var configuration = Backgrounder.Configuration(storePath: storePath)
    if let logger { configuration.logger = logger }
    configure(&configuration)
    return configuration
  }

  /// Runs every part until cancelled or graceful shutdown; the first failure ends them all.
  public func run() async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
      for part in parts {
        let service = part.service
        group.addTask { try await service.run() }
      }
      try await group.waitForAll()
    }
  }
}

extension LinuxConditionSources {
  /// The hint sources' problems, for `status` `"health"` and `doctor`: a source that timed out
  /// (treated as absent), and a stale answer dropped after the stale-hints limit (the kernel
  /// decides).
  public func healthProblems() -> [HealthProblem] {
    Self.healthProblems(of: monitor.status)
  }

  /// The problems `status`'s hint sources show.
  public static func healthProblems(of status: NetworkStatus) -> [HealthProblem] {
    status.sources.keys.sorted().compactMap { name -> HealthProblem? in
      guard let state = status.sources[name] else { return nil }
      let at = state.since.map { Date(timeIntervalSince1970: $0) }
      switch state {
      case .timedOut:
        return HealthProblem(
          kind: .conditionSourceTimedOut, detectedAt: at,
          message: "\(name.rawValue) is on the bus but did not answer in time; it is treated "
            + "as absent (kernel signals decide) until it answers")
      case .expired:
        return HealthProblem(
          kind: .conditionSourceGone, detectedAt: at,
          message: "\(name.rawValue) left and stayed away past the stale-hints limit; its "
            + "last answer was dropped and kernel signals decide")
      default:
        return nil
      }
    }
  }
}
