import Logging
import Netlink
import Reachability
import ServiceLifecycle
import SystemCalls

/// The opt-in connectivity probe: one HTTP GET over the primary link after each change of the
/// primary link, its SSID or reachability; retried with exponential backoff while the answer is
/// `portal` or `limited`; nothing while the state is stable. Results go into the monitor's
/// ``LinkHints/probe``; NetworkManager's own connectivity, when known, wins and the probe then
/// stays silent.
public final class ConnectivityProber: Service, Sendable {
  /// Retry timing while the network is a portal or limited.
  public struct Backoff: Sendable, Equatable {
    /// The first retry delay.
    public var initial: Duration
    /// The longest retry delay.
    public var maximum: Duration

    /// Creates a backoff (defaults: 10 s doubling up to 10 min).
    public init(initial: Duration = .seconds(10), maximum: Duration = .seconds(600)) {
      self.initial = initial
      self.maximum = maximum
    }
  }

  private struct Trigger: Equatable {
    var primary: String
    var ssid: String?
  }

  private let monitor: ReachabilityMonitor
  private let check: ConnectivityCheck
  private let backoff: Backoff
  private let timeoutMilliseconds: Int32
  private let networkNamespacePath: String?
  private let clock: any Clock<Duration>
  private let logger: Logger

  /// Creates the prober. `networkNamespacePath`: probe from inside that namespace (the one the
  /// monitor watches); `clock` times the retries.
  public init(
    monitor: ReachabilityMonitor, check: ConnectivityCheck, backoff: Backoff = Backoff(),
    timeout: Duration = .seconds(5), networkNamespacePath: String? = nil,
    clock: any Clock<Duration> = ContinuousClock(), logger: Logger
  ) {
    self.monitor = monitor
    self.check = check
    self.backoff = backoff
    let milliseconds =
      timeout.components.seconds * 1000
      + timeout.components.attoseconds / 1_000_000_000_000_000
    timeoutMilliseconds = Int32(clamping: milliseconds)
    self.networkNamespacePath = networkNamespacePath
    self.clock = clock
    self.logger = logger
    // A configured probe is a connectivity source: until its first verdict, "unknown" means
    // "not known yet" (unknown is not permission).
    let since = wallSeconds()
    monitor.updateHints { $0.sources[.probe] = .waiting(since: since) }
  }

  /// Follows the monitor's status until cancelled or graceful shutdown.
  public func run() async throws {
    var last: Trigger?
    var probing: Task<Void, Never>?
    defer {
      probing?.cancel()
      monitor.updateHints { $0.sources[.probe] = nil }
    }
    for await status in monitor.statusUpdates().cancelOnGracefulShutdown() {
      let trigger =
        status.isReachable
        ? status.primary.map {
          Trigger(primary: $0, ssid: status.primaryLink?.ssid)
        } : nil
      guard trigger != last else { continue }
      last = trigger
      probing?.cancel()
      probing = nil
      // A new network: the last answer no longer applies ("unknown" trusts the routes).
      if monitor.hints.probe != nil { monitor.updateHints { $0.probe = nil } }
      guard let trigger else {
        // Nothing to probe: no network, so nothing waits for a verdict.
        markAnswered()
        continue
      }
      probing = Task { [self] in await probeUntilFull(link: trigger.primary) }
    }
  }

  private func probeUntilFull(link: String) async {
    var delay = backoff.initial
    while !Task.isCancelled {
      if monitor.hints.networkManagerConnectivity != .unknown {
        markAnswered()
        return
      }
      let result = await probe(link: link)
      guard !Task.isCancelled else { return }
      logger.debug("connectivity probe", metadata: ["link": "\(link)", "result": "\(result)"])
      monitor.updateHints { hints in
        hints.probe = (link, result)
        hints.sources[.probe] = .answered
      }
      if result == .full { return }
      do { try await clock.sleep(for: delay) } catch { return }
      delay = min(delay * 2, backoff.maximum)
    }
  }

  private func markAnswered() {
    if monitor.hints.sources[.probe] != .answered {
      monitor.updateHints { $0.sources[.probe] = .answered }
    }
  }

  /// One probe on a dedicated thread (blocking socket I/O stays off the concurrency pool).
  private func probe(link: String) async -> Connectivity {
    let check = check
    let timeout = timeoutMilliseconds
    let namespace = networkNamespacePath
    return await withCheckedContinuation { continuation in
      do {
        try SystemThread.detach(name: "bg-probe") {
          let run: @Sendable () -> Connectivity = {
            HTTPProbe.run(check, interface: link, timeoutMilliseconds: timeout)
          }
          if let namespace {
            continuation.resume(
              returning: (try? NetworkNamespace.perform(inNamespaceAt: namespace, run)) ?? .limited)
          } else {
            continuation.resume(returning: run())
          }
        }
      } catch {
        continuation.resume(returning: .unknown)
      }
    }
  }
}
