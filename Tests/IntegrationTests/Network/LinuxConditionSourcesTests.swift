import Backgrounder
import BackgrounderLinux
import Foundation
import Locking
import Logging
import NetworkHints
import Reachability
import TestSupport
import Testing

/// The one call an embedding app makes (`LinuxConditionSources`), against a namespace this
/// test creates and python-dbusmock's NetworkManager on a private bus: a due `unmetered` job
/// waits while NetworkManager has not answered, stays held while it says metered, and runs
/// once when it says not metered.
@Suite(
  .blockingIO,
  .serialized,
  .enabled(if: getuid() == 0, "needs root to create network namespaces and veth pairs"),
  .enabled(if: PrivateBus.isAvailable, "needs dbus-daemon, dbus-send and python3-dbusmock"),
  .timeLimit(.minutes(3)))
struct LinuxConditionSourcesTests {
  @Test func oneCallWiresTheLiveSourcesWithRuleOne() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    let device = try bus.addWifiDevice(interface: "veth0", metered: 3)  // guess-yes
    bus.signalNetworkManager(SIGSTOP)
    defer { bus.signalNetworkManager(SIGCONT) }
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    try sandbox.ip("link", "set", "veth0", "up")
    try sandbox.ip("addr", "add", "192.0.2.1/24", "dev", "veth0")
    try sandbox.ip("route", "add", "default", "via", "192.0.2.254", "dev", "veth0")

    let sources = LinuxConditionSources(
      options: .init(
        reachability: ReachabilityConfiguration(
          sysfsRoot: "/nonexistent", networkNamespacePath: sandbox.path),
        hints: NetworkHintsConfiguration(
          busAddress: bus.address, watchWifi: false, sourceTimeout: .seconds(30),
          useModemManager: false),
        sysfsRoot: "/nonexistent"),
      logger: Logger(label: "test.linux-sources"))
    let directory = NSTemporaryDirectory() + "bglinux-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let runtime = Backgrounder(
      configuration: sources.configuration(storePath: directory + "/state.sqlite"))
    let id = try TaskId("dev.example.linux-sources")
    let told = Lock<[Bool]>([])
    try runtime.register(id) {
      ClosureWorker { context in
        told.withLock { $0.append(context.network.isDataMetered) }
        return .success
      }
    }
    let running = Task { try await sources.run() }
    defer { running.cancel() }
    try await runtime.start()
    defer { Task { await runtime.shutdown() } }
    #expect(
      runtime.diagnostics().problems.filter {
        $0.kind == .networkSourceMissing || $0.kind == .powerSourceMissing
      }.isEmpty)
    _ = await runtime.schedule(
      WorkRequest.OneTime(
        taskId: id, constraints: WorkConstraints(networkRequired: .unmetered),
        budget: .seconds(60)))

    // The route is there (the kernel calls veth unmetered), but NetworkManager has not answered.
    _ = try await sources.monitor.firstStatus("reachable via veth0") { $0.primary == "veth0" }
    try await Task.sleep(for: .milliseconds(500))
    #expect(told.withLock { $0 }.isEmpty, "ran before NetworkManager answered")
    #expect(runtime.diagnostics().network.unknownSources == ["NetworkManager"])

    bus.signalNetworkManager(SIGCONT)
    _ = try await sources.monitor.firstStatus("NetworkManager answered: metered") {
      $0.isSettled && $0.isDataMetered
    }
    try await Task.sleep(for: .milliseconds(300))
    #expect(told.withLock { $0 }.isEmpty, "ran on a link NetworkManager calls metered")

    try bus.setMetered(2, device: device)  // no
    _ = try await daemonEventually("the job ran") { told.withLock { $0.isEmpty ? nil : $0 } }
    #expect(told.withLock { $0 } == [false], "ran once, told unmetered")
  }
}
