import CSystemdBus
import Glibc
import Locking
import Logging
import Netlink
import Reachability
import ServiceLifecycle

/// Settings of ``NetworkHintsService``.
public struct NetworkHintsConfiguration: Sendable, Equatable {
  /// Ask NetworkManager over D-Bus for metered settings and connectivity.
  public var useNetworkManager: Bool
  /// The D-Bus address to use (`unix:path=...`); `nil` for the system bus. Tests point this at
  /// a private bus.
  public var busAddress: String?
  /// Follow Wi-Fi SSIDs through nl80211.
  public var watchWifi: Bool

  /// Creates a configuration.
  public init(useNetworkManager: Bool = true, busAddress: String? = nil, watchWifi: Bool = true) {
    self.useNetworkManager = useNetworkManager
    self.busAddress = busAddress
    self.watchWifi = watchWifi
  }
}

/// Feeds a ``ReachabilityMonitor`` with link hints: NetworkManager's metered settings and
/// connectivity over D-Bus (following `PropertiesChanged` and `NameOwnerChanged`, re-reading
/// after each), and the SSID of each Wi-Fi link from nl80211 (connect, disconnect and roam
/// events). One dedicated thread sleeps in `poll()` with no timeout while nothing changes.
///
/// NetworkManager absent, stopped or restarted, or the bus gone: its hints are cleared (the
/// kernel signals decide) and picked up again when it comes back. No D-Bus or nl80211 failure
/// ends ``run()``.
public final class NetworkHintsService: Service, Sendable {
  private let configuration: NetworkHintsConfiguration
  private let monitor: ReachabilityMonitor
  private let logger: Logger
  private let settledWaiters = Lock<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>(
    (false, []))

  /// Creates the service; nothing happens until ``run()``.
  public init(
    monitor: ReachabilityMonitor, configuration: NetworkHintsConfiguration, logger: Logger
  ) {
    self.monitor = monitor
    self.configuration = configuration
    self.logger = logger
  }

  /// Runs until cancelled or graceful shutdown. Throws only when the thread cannot start.
  public func run() async throws {
    let wake = WakeDescriptor()
    guard wake.descriptor >= 0 else {
      throw NetlinkSystemError(operation: "eventfd", errno: errno)
    }
    let loop = HintsEventLoopBox(
      HintsEventLoop(
        configuration: configuration, monitor: monitor, logger: logger,
        wakeDescriptor: wake.descriptor, onSettled: { [self] in settle() }))
    try await withGracefulShutdownHandler {
      try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation {
          (continuation: CheckedContinuation<Void, any Error>) in
          do {
            try DedicatedThread.detach {
              loop.run()
              continuation.resume()
            }
          } catch {
            continuation.resume(throwing: error)
          }
        }
      } onCancel: {
        wake.signal()
      }
    } onGracefulShutdown: {
      wake.signal()
    }
    settle()
    monitor.updateHints { hints in
      hints.networkManagerMetered = [:]
      hints.networkManagerConnectivity = .unknown
      hints.networkManagerDeviceConnectivity = [:]
      hints.ssids = [:]
    }
  }
}

extension NetworkHintsService {
  /// Returns once the first NetworkManager read and the first nl80211 interface dump are in
  /// the monitor (or failed), or ``run()`` ended: one-shot `status` waits for this.
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

/// Hands the loop to its thread; only that thread touches it.
private final class HintsEventLoopBox: @unchecked Sendable {
  private let loop: HintsEventLoop
  init(_ loop: HintsEventLoop) { self.loop = loop }
  func run() { loop.run() }
}

/// An eventfd that wakes the hints thread.
private final class WakeDescriptor: Sendable {
  let descriptor: Int32

  init() { descriptor = csd_eventfd_nonblocking() }
  deinit { if descriptor >= 0 { close(descriptor) } }

  func signal() {
    var one: UInt64 = 1
    _ = write(descriptor, &one, MemoryLayout<UInt64>.size)
  }
}
