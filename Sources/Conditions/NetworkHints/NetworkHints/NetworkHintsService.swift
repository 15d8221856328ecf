import CSystemdBus
import EventLoops
import Glibc
import Locking
import Logging
import Netlink
import Reachability
import ServiceLifecycle
import SystemCalls

/// Settings of ``NetworkHintsService``.
public struct NetworkHintsConfiguration: Sendable, Equatable {
  /// Ask NetworkManager over D-Bus for metered settings and connectivity.
  public var useNetworkManager: Bool
  /// The D-Bus address to use (`unix:path=...`); `nil` for the system bus. Tests point this at
  /// a private bus.
  public var busAddress: String?
  /// Follow Wi-Fi SSIDs through nl80211.
  public var watchWifi: Bool
  /// How long NetworkManager may take to answer one read in all (every device together)
  /// before it is treated as absent, with a health problem (`[network] source-timeout`).
  public var sourceTimeout: Duration
  /// How long NetworkManager's last answer is kept, marked stale, after it left the bus
  /// (`[network] stale-hints`); then the kernel signals decide.
  public var staleHints: Duration
  /// Ask ModemManager over D-Bus which links are on a modem registered on a roaming network
  /// (`[network] modemmanager`).
  public var useModemManager: Bool

  /// The default `[network] source-timeout`: 5 s.
  public static let defaultSourceTimeout: Duration = .seconds(5)
  /// The default `[network] stale-hints`: 2 minutes.
  public static let defaultStaleHints: Duration = .seconds(120)

  /// Creates a configuration.
  public init(
    useNetworkManager: Bool = true, busAddress: String? = nil, watchWifi: Bool = true,
    sourceTimeout: Duration = defaultSourceTimeout, staleHints: Duration = defaultStaleHints,
    useModemManager: Bool = true
  ) {
    self.useModemManager = useModemManager
    self.useNetworkManager = useNetworkManager
    self.busAddress = busAddress
    self.watchWifi = watchWifi
    self.sourceTimeout = sourceTimeout
    self.staleHints = staleHints
  }

  var networkManagerLimits: NetworkManagerSource.Limits {
    NetworkManagerSource.Limits(sourceTimeout: sourceTimeout, staleLimit: staleHints)
  }
}

/// Feeds a ``ReachabilityMonitor`` with link hints: NetworkManager's metered settings and
/// connectivity over D-Bus (following `PropertiesChanged` and `NameOwnerChanged`, re-reading
/// after each), and the SSID of each Wi-Fi link from nl80211 (connect, disconnect and roam
/// events). The bus and the socket are watched by an `EventLoop` (a host's shared loop, or one
/// of its own while ``run()`` runs), with no timer while nothing changes.
///
/// Unknown is not permission: from its creation the monitor's status lists NetworkManager and
/// nl80211 as ``HintSourceState/waiting(since:)`` until they answered, are known absent, or
/// timed out (`sourceTimeout`, for a whole read). NetworkManager leaving the bus (stopped,
/// restarted) or the bus gone: its last answer is kept, marked stale, until it comes back or
/// `staleHints` passes; then its hints are cleared (the kernel signals decide). No D-Bus or
/// nl80211 failure ends ``run()``.
public final class NetworkHintsService: Service, Sendable {
  private let configuration: NetworkHintsConfiguration
  private let monitor: ReachabilityMonitor
  private let logger: Logger
  private let eventLoop: EventLoop?
  private let settledWaiters = Lock<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>(
    (false, []))

  /// Creates the service; nothing happens until ``run()``. Without `eventLoop`, the service is
  /// served by the process's shared loop (`EventLoop.shared()`).
  public init(
    monitor: ReachabilityMonitor, configuration: NetworkHintsConfiguration, logger: Logger,
    eventLoop: EventLoop? = nil
  ) {
    self.monitor = monitor
    self.eventLoop = eventLoop
    self.configuration = configuration
    self.logger = logger
    let since = wallSeconds()
    monitor.updateHints { hints in
      if configuration.useNetworkManager {
        hints.sources[.networkManager] = .waiting(since: since)
      }
      if configuration.watchWifi { hints.sources[.nl80211] = .waiting(since: since) }
      if configuration.useModemManager { hints.sources[.modemManager] = .waiting(since: since) }
    }
  }

  /// Runs until cancelled or graceful shutdown. Throws only when the shared event loop (none
  /// given) cannot start.
  public func run() async throws {
    let loop = try eventLoop ?? EventLoop.shared()
    let hints = HintsEventLoop(
      configuration: configuration, monitor: monitor, logger: logger, loop: loop,
      onSettled: { [self] in settle() })
    loop.execute { hints.start() }
    // Until cancelled or a graceful shutdown.
    try? await gracefulShutdown()
    await loop.submit { hints.stop() }
    settle()
    monitor.updateHints { hints in
      hints.networkManagerMetered = [:]
      hints.networkManagerConnectivity = .unknown
      hints.networkManagerDeviceConnectivity = [:]
      hints.networkManagerChecksConnectivity = false
      hints.ssids = [:]
      hints.sources[.networkManager] = nil
      hints.sources[.nl80211] = nil
      hints.modemManagerRoaming = [:]
      hints.sources[.modemManager] = nil
    }
  }
}

extension NetworkHintsService {
  /// Reads the hints once, on the calling thread: the first NetworkManager and ModemManager
  /// reads and the first nl80211 dumps, each bounded by its source timeout, on a loop this
  /// thread runs (no thread of its own: a one-shot `status`). Returns once they are in the
  /// monitor (or failed); nothing is watched after. Instead of ``run()``, not beside it.
  public func settleOnCallingThread() throws(SystemCallError) {
    let loop = try EventLoop(name: "bg-events", startingThread: false)
    let hints = HintsEventLoop(
      configuration: configuration, monitor: monitor, logger: logger, loop: loop,
      onSettled: { loop.stop() })
    loop.execute { hints.start() }
    loop.runOnCallingThread()
    hints.stop()
    settle()
  }

  /// Returns once the first NetworkManager read and the first nl80211 interface dump are in
  /// the monitor (or failed), or ``run()`` ended.
  public func settled() async {
    await withCheckedContinuation { continuation in
      let resumeNow = settledWaiters.withLock { state in
        if state.done { return true }
        state.waiters.append(continuation)
        return false
      }
      if resumeNow { continuation.resume() }
    }
  }

  fileprivate func settle() {
    let waiters = settledWaiters.withLock { state in
      state.done = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }
}
