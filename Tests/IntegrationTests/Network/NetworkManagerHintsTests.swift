import Backgrounder
import BackgrounderLinux
import EventLoops
import Foundation
import Locking
import Logging
import NetworkHints
import Reachability
import TestSupport
import Testing

/// The monitor with NetworkManager hints from python-dbusmock's NetworkManager template on a
/// private `dbus-daemon`, and a reachable veth link in a network namespace these tests create.
@Suite(
  .blockingIO,
  .serialized,
  .enabled(if: getuid() == 0, "needs root to create network namespaces and veth pairs"),
  .enabled(if: PrivateBus.isAvailable, "needs dbus-daemon, dbus-send and python3-dbusmock"))
struct NetworkManagerHintsTests {
  static let metered: UInt32 = 1
  static let notMetered: UInt32 = 2
  static let guessYes: UInt32 = 3

  /// A namespace of our own whose veth0 has an address and the default route.
  private static func reachableNamespace() throws -> NamespaceSandbox {
    let sandbox = try NamespaceSandbox.create()
    do {
      try sandbox.ip("link", "set", "veth0", "up")
      try sandbox.ip("addr", "add", "192.0.2.1/24", "dev", "veth0")
      try sandbox.ip("route", "add", "default", "via", "192.0.2.254", "dev", "veth0")
    } catch {
      sandbox.remove()
      throw error
    }
    return sandbox
  }

  /// A monitor of `sandbox`'s network (not running yet).
  private static func monitor(of sandbox: NamespaceSandbox, logger: Logger) -> ReachabilityMonitor {
    ReachabilityMonitor(
      configuration: ReachabilityConfiguration(
        sysfsRoot: "/nonexistent", networkNamespacePath: sandbox.path),
      logger: logger)
  }

  /// A monitor watching a namespace whose veth0 is reachable, fed by a hints service on `bus`.
  private func withHintedMonitor(
    bus: PrivateBus, sourceTimeout: Duration = .seconds(5), staleHints: Duration = .seconds(120),
    untilSettled: Bool = true, eventLoop: EventLoop? = nil,
    _ body: (ReachabilityMonitor, NamespaceSandbox) async throws -> Void
  ) async throws {
    let sandbox = try Self.reachableNamespace()
    defer { sandbox.remove() }
    let logger = Logger(label: "test.nm-hints")
    let monitor = Self.monitor(of: sandbox, logger: logger)
    let hints = NetworkHintsService(
      monitor: monitor,
      configuration: NetworkHintsConfiguration(
        busAddress: bus.address, watchWifi: false, sourceTimeout: sourceTimeout,
        staleHints: staleHints, useModemManager: false),
      logger: logger, eventLoop: eventLoop)
    let running = Task {
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await monitor.run() }
        group.addTask { try await hints.run() }
        try await group.waitForAll()
      }
    }
    defer { running.cancel() }
    _ = try await monitor.firstStatus("reachable via veth0") {
      $0.primary == "veth0" && (!untilSettled || $0.isSettled)
    }
    try await body(monitor, sandbox)
  }

  /// One-shot `status`: the network and NetworkManager's answer read on the calling thread
  /// (a snapshot, then hints settled on a loop this thread runs), with no thread started.
  @Test func oneLookReadsNetworkManagerOnTheCallingThread() throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    _ = try bus.addWifiDevice(interface: "veth0", metered: Self.metered)
    let sandbox = try Self.reachableNamespace()
    defer { sandbox.remove() }
    let logger = Logger(label: "test.nm-hints")
    let monitor = Self.monitor(of: sandbox, logger: logger)
    let first = try monitor.snapshot()
    #expect(first.primary == "veth0" && !first.isDataMetered)
    let caller = pthread_self()
    let onCaller = Lock(true)
    monitor.observeStatus { _ in
      onCaller.withLock { $0 = $0 && pthread_equal(pthread_self(), caller) != 0 }
    }
    try NetworkHintsService(
      monitor: monitor,
      configuration: NetworkHintsConfiguration(
        busAddress: bus.address, watchWifi: true, sourceTimeout: .seconds(5),
        useModemManager: false),
      logger: logger
    ).settleOnCallingThread()
    let settled = monitor.status
    #expect(settled.isSettled)
    #expect(settled.isDataMetered)
    #expect(settled.primaryLink?.meteredReason == .networkManager(.yes))
    #expect(onCaller.withLock { $0 }, "the hints were published on the calling thread")
  }

  @Test func onASharedEventLoopTheHintsFollowSignalsWithoutALoopOfTheirOwn() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    let device = try bus.addWifiDevice(interface: "veth0", metered: Self.metered)
    let loop = try EventLoop(name: "bg-test-shared")
    defer { loop.stop() }
    try await withHintedMonitor(bus: bus, eventLoop: loop) { monitor, _ in
      _ = try await monitor.firstStatus("metered by NetworkManager") { $0.isDataMetered }
      // The bus is watched on the loop it was given (a service with a loop of its own would
      // register nothing here; other tests' services may run `bg-hints` threads meanwhile, so
      // the process's thread names cannot tell). While a read of NetworkManager's properties
      // runs on a thread of its own, the bus is off the loop: wait for it to come back.
      #expect(await TestSupport.eventually { loop.registrationCount >= 1 ? true : nil } != nil)
      try bus.setMetered(Self.notMetered, device: device)
      let unmetered = try await monitor.firstStatus("the user flipped it to no") {
        !$0.isDataMetered
      }
      #expect(unmetered.primaryLink?.meteredReason == .networkManager(.no))
    }
  }

  @Test func meteredSettingFollowsNetworkManagerSignals() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    let device = try bus.addWifiDevice(interface: "veth0", metered: Self.metered)
    try await withHintedMonitor(bus: bus) { monitor, _ in
      let metered = try await monitor.firstStatus("metered by NetworkManager") {
        $0.isDataMetered
      }
      #expect(metered.primaryLink?.meteredReason == .networkManager(.yes))
      #expect(metered.primaryLink?.meteredReason.code == "networkmanager:yes")

      try bus.setMetered(Self.notMetered, device: device)
      let unmetered = try await monitor.firstStatus("the user flipped it to no") {
        !$0.isDataMetered
      }
      #expect(unmetered.primaryLink?.meteredReason == .networkManager(.no))

      try bus.setMetered(Self.guessYes, device: device)
      let guessed = try await monitor.firstStatus("NetworkManager guessed metered") {
        $0.isDataMetered
      }
      #expect(guessed.primaryLink?.meteredReason == .networkManager(.guessYes))
    }
  }

  @Test func networkManagerLeavingKeepsItsLastAnswerStaleUntilTheLimit() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    _ = try bus.addWifiDevice(interface: "veth0", metered: Self.metered)
    try await withHintedMonitor(bus: bus, staleHints: .milliseconds(600)) { monitor, _ in
      let fresh = try await monitor.firstStatus("metered by NetworkManager") { $0.isDataMetered }
      #expect(fresh.sources[.networkManager] == .answered)
      #expect(MonitoredNetwork.conditions(fresh).isKnown)

      // NetworkManager leaves the bus (as in `systemctl restart`): held work stays held.
      bus.stopNetworkManager()
      let stale = try await monitor.firstStatus("NetworkManager's answer kept, stale") {
        $0.networkManagerIsStale
      }
      #expect(stale.isDataMetered, "the kernel's guess (veth: unmetered) must not take over")
      #expect(stale.primaryLink?.meteredReason == .networkManager(.yes))
      #expect(stale.primaryLink?.isStale == true)
      #expect(stale.connectivity == .full && stale.connectivityIsStale)
      #expect(LinuxConditionSources.healthProblems(of: stale).isEmpty)

      // Past the stale limit: the kernel decides, and a health problem says so.
      let expired = try await monitor.firstStatus("the stale answer dropped") {
        if case .expired = $0.sources[.networkManager] { true } else { false }
      }
      #expect(!expired.isDataMetered)
      #expect(expired.primaryLink?.meteredReason == .virtual(kind: "veth"))
      #expect(
        LinuxConditionSources.healthProblems(of: expired).map(\.kind) == [.conditionSourceGone])

      // It comes back: its fresh answer wins.
      try bus.startNetworkManager()
      _ = try bus.addWifiDevice(interface: "veth0", metered: Self.metered)
      let back = try await monitor.firstStatus("NetworkManager back") {
        $0.isDataMetered && $0.sources[.networkManager] == .answered
      }
      #expect(back.primaryLink?.meteredReason == .networkManager(.yes))
      #expect(back.primaryLink?.isStale == false)
    }
  }

  @Test func networkManagerReturningWithinTheLimitReplacesTheStaleAnswer() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    _ = try bus.addWifiDevice(interface: "veth0", metered: Self.metered)
    try await withHintedMonitor(bus: bus) { monitor, _ in
      _ = try await monitor.firstStatus("metered by NetworkManager") { $0.isDataMetered }
      bus.stopNetworkManager()
      _ = try await monitor.firstStatus("stale") { $0.networkManagerIsStale }
      try bus.startNetworkManager()
      _ = try bus.addWifiDevice(interface: "veth0", metered: Self.notMetered)
      let back = try await monitor.firstStatus("its fresh answer") {
        $0.sources[.networkManager] == .answered
          && $0.primaryLink?.meteredReason == .networkManager(.no)
      }
      #expect(!back.isDataMetered)
      #expect(back.primaryLink?.isStale == false)
    }
  }

  @Test func networkManagerBackWithoutAMeteredAnswerYetKeepsTheStaleOne() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    _ = try bus.addWifiDevice(interface: "veth0", metered: Self.metered)
    try await withHintedMonitor(bus: bus) { monitor, _ in
      _ = try await monitor.firstStatus("metered by NetworkManager") { $0.isDataMetered }
      bus.stopNetworkManager()
      _ = try await monitor.firstStatus("stale") { $0.networkManagerIsStale }
      // Back after a restart, its device there but `Metered` still unknown (0).
      try bus.startNetworkManager()
      let device = try bus.addWifiDevice(interface: "veth0", metered: 0)
      try await Task.sleep(for: .milliseconds(300))
      let back = monitor.status
      #expect(back.isDataMetered, "the kernel's guess must not take over: \(back)")
      #expect(back.networkManagerIsStale)
      try bus.setMetered(Self.notMetered, device: device)
      let fresh = try await monitor.firstStatus("NetworkManager answered for veth0") {
        $0.sources[.networkManager] == .answered
      }
      #expect(!fresh.isDataMetered)
      #expect(fresh.primaryLink?.meteredReason == .networkManager(.no))
    }
  }

  @Test func silentNetworkManagerTimesOutOncePerSourceNotPerDevice() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    for index in 0..<4 {
      _ = try bus.addWifiDevice(
        interface: "wlan\(index)", metered: Self.metered, device: "wifi\(index)")
    }
    bus.signalNetworkManager(SIGSTOP)  // on the bus, silent
    let started = ContinuousClock.now
    try await withHintedMonitor(bus: bus, sourceTimeout: .milliseconds(400)) { monitor, _ in
      let elapsed = ContinuousClock.now - started
      let status = monitor.status
      guard case .timedOut = status.sources[.networkManager] else {
        Issue.record("NetworkManager should have timed out: \(status.sources)")
        return
      }
      #expect(status.isSettled, "timed out counts as answered for readiness")
      #expect(MonitoredNetwork.conditions(status).isKnown)
      // One limit for the whole read, not 400 ms per device (4 × 400 ms).
      #expect(elapsed < .milliseconds(1_500), "settled after \(elapsed)")
      #expect(
        LinuxConditionSources.healthProblems(of: status).map(\.kind)
          == [.conditionSourceTimedOut])
      bus.signalNetworkManager(SIGCONT)
    }
  }

  @Test func theStatusIsNotSettledBeforeNetworkManagerAnswers() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    _ = try bus.addWifiDevice(interface: "veth0", metered: Self.metered)
    bus.signalNetworkManager(SIGSTOP)
    try await withHintedMonitor(bus: bus, sourceTimeout: .seconds(30), untilSettled: false) {
      monitor, _ in
      let waiting = monitor.status
      #expect(waiting.waitingSources == [.networkManager])
      let conditions = MonitoredNetwork.conditions(waiting)
      #expect(!conditions.isKnown)
      #expect(conditions.unknownSources == ["NetworkManager"])
      #expect(!NetworkRequirement.any.isSatisfied(by: conditions))
      bus.signalNetworkManager(SIGCONT)
      let answered = try await monitor.firstStatus("NetworkManager answered") { $0.isSettled }
      #expect(answered.isDataMetered)
      #expect(MonitoredNetwork.conditions(answered).isKnown)
    }
  }

  @Test func noNetworkManagerOnTheBusMeansKernelSignals() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try await withHintedMonitor(bus: bus) { monitor, _ in
      let status = monitor.status
      #expect(status.primaryLink?.meteredReason == .virtual(kind: "veth"))
      #expect(status.connectivity == .unknown)
      #expect(status.sources[.networkManager] == .absent, "definitively absent: not waited for")
      // It appears later: picked up through NameOwnerChanged.
      try bus.startNetworkManager()
      _ = try bus.addWifiDevice(interface: "veth0", metered: Self.metered)
      let later = try await monitor.firstStatus("NetworkManager appeared") { $0.isDataMetered }
      #expect(later.connectivity == .full)
    }
  }

  @Test func captivePortalHoldsAnyJobUntilConnectivityIsFull() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    _ = try bus.addWifiDevice(interface: "veth0", metered: Self.notMetered)
    try bus.setConnectivity(2)  // NM_CONNECTIVITY_PORTAL
    try await withHintedMonitor(bus: bus) { monitor, _ in
      let portal = try await monitor.firstStatus("portal") { $0.connectivity == .portal }
      #expect(portal.connectivitySource == .networkManager)

      let directory = NSTemporaryDirectory() + "bgportal-\(UInt32.random(in: 0...UInt32.max))"
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(atPath: directory) }
      let runtime = Backgrounder(
        configuration: .init(
          storePath: "\(directory)/state.sqlite", network: MonitoredNetwork(monitor)))
      let id = try TaskId("dev.example.portal-upload")
      let runs = RunCounter()
      try runtime.register(id) {
        ClosureWorker { _ in
          runs.count.withLock { $0 += 1 }
          return .success
        }
      }
      try await runtime.start()
      defer { Task { await runtime.shutdown() } }
      let outcome = await runtime.schedule(
        WorkRequest.OneTime(
          taskId: id, constraints: WorkConstraints(networkRequired: .any), budget: .seconds(4)))
      #expect(outcome == .scheduled)

      let held = try await daemonEventually("the job waits for working internet") {
        runtime.scheduled().first {
          $0.pendingPredicates.contains(.workingInternet(.portal))
        }
      }
      #expect(held.state != .running)
      #expect(runs.count.withLock { $0 } == 0)

      try bus.setConnectivity(4)  // NM_CONNECTIVITY_FULL
      let count = try await daemonEventually("the job runs once connectivity is full") {
        runs.count.withLock { $0 > 0 ? $0 : nil }
      }
      #expect(count == 1)
    }
  }
}

/// Counts worker invocations.
private final class RunCounter: Sendable {
  let count = Lock(0)
}
