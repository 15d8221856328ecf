import Backgrounder
import BackgrounderTesting
import Foundation
import Glibc
import Testing

@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct NetworkAllowListTests {
  static let home = NetworkConditions(
    isReachable: true, primaryLink: "wlan0", primarySSID: "Home-5G")
  static let hotspot = NetworkConditions(
    isReachable: true, isDataMetered: true, primaryLink: "wlan0", primarySSID: "Pixel-Hotspot")
  static let wired = NetworkConditions(isReachable: true, primaryLink: "enp3s0")

  @Test("the glob matcher agrees with fnmatch(3) on ASCII patterns")
  func globMatchesLikeFnmatch() {
    let patterns = [
      "Home*", "*", "", "Office-WiFi", "eth?", "en[ox]*", "[!w]*", "[^w]*", "a[b-d]e", "*5G",
      "H*e*G", "\\*", "[]]x", "[a-]", "lit[", "*[0-9]", "**", "a\\", "[!]]",
    ]
    let names = [
      "Home", "Home-5G", "Office-WiFi", "office-wifi", "eth0", "eth10", "enp3s0", "eno1",
      "wlan0", "ace", "abe", "afe", "*", "]x", "-", "lit[", "x9", "", "a\\", "]", "HomeG",
    ]
    for pattern in patterns {
      for name in names {
        #expect(
          GlobPattern(pattern).matches(name) == (fnmatch(pattern, name, 0) == 0),
          "pattern \(pattern) name \(name)")
      }
    }
  }

  @Test("the allow-lists name what is there now; unknown conditions are not permission")
  func unmetPredicates() {
    let list = NetworkAllowList(ssids: ["Home*", "Office-WiFi"])
    #expect(list.unmet(by: Self.home) == nil)
    #expect(
      list.unmet(by: Self.hotspot)
        == .wifiNetwork(allowed: ["Home*", "Office-WiFi"], current: "Pixel-Hotspot"))
    #expect(
      list.unmet(by: Self.wired) == .wifiNetwork(allowed: ["Home*", "Office-WiFi"], current: nil))
    var unknown = Self.home
    unknown.unknownSources = ["nl80211"]
    #expect(
      list.unmet(by: unknown) == .wifiNetwork(allowed: ["Home*", "Office-WiFi"], current: nil))
    let wiredOnly = NetworkAllowList(interfaces: ["eth*", "enp*"])
    #expect(wiredOnly.unmet(by: Self.wired) == nil)
    #expect(
      wiredOnly.unmet(by: Self.home)
        == .networkInterface(allowed: ["eth*", "enp*"], current: "wlan0"))
    #expect(
      wiredOnly.unmet(by: .offline) == .networkInterface(allowed: ["eth*", "enp*"], current: nil))
    #expect(NetworkAllowList.any.unmet(by: .offline) == nil)
  }

  @Test("a due job waits on a Wi-Fi network that is not allowed, says why, and runs at home")
  func waitsForAllowedSSID() async throws {
    let job = id("test.where.ssid")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker], network: Self.hotspot)

    let constraints = WorkConstraints(
      networkRequired: .any, allowedNetworks: NetworkAllowList(ssids: ["Home*", "Office-WiFi"]))
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job, constraints: constraints))
    await h.clock.waitForSleepers(until: h.at(5))
    h.clock.advance(by: .seconds(5))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .reachabilityTimeout) }
    #expect(worker.invocations == 0)
    let waiting = PendingPredicate.wifiNetwork(
      allowed: ["Home*", "Office-WiFi"], current: "Pixel-Hotspot")
    #expect(try #require(h.task(job)).pendingPredicates.contains(waiting))
    // The store (what `status` reads) keeps the predicate, globs and SSID included.
    let stored = try #require(try await h.status(job))
    #expect(stored.pendingPredicates.contains(waiting))
    #expect(
      stored.lastReason?.contains("Wi-Fi network Home*, Office-WiFi (now: Pixel-Hotspot)") == true)

    h.network.set(Self.home)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
  }

  @Test("leaving the allowed network mid-run stops the run: a retry, no attempt used")
  func switchMidRunStops() async throws {
    let job = id("test.where.midrun")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker], network: Self.wired)

    let constraints = WorkConstraints(
      allowedNetworks: NetworkAllowList(interfaces: ["eth*", "enp*"]))
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job, constraints: constraints))
    await worker.waitUntilInvoked()
    // Unknown is not a loss: the run goes on while nl80211 has not answered.
    var unknown = Self.home
    unknown.unknownSources = ["nl80211"]
    h.network.set(unknown)
    await h.driver.flush()
    #expect(worker.stopReasons.isEmpty)
    h.network.set(Self.home)
    await h.waitFor(job) { $0 == .workStopped(attempt: 0, reason: .networkNotAllowed) }
    #expect(worker.stopReasons == [.networkNotAllowed])
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .constraintLost) }
    let task = try #require(h.task(job))
    #expect(task.attempt == 0)
    #expect(task.lastResult == .retry)

    h.network.set(Self.wired)
    await worker.waitUntilInvoked(count: 2)
    worker.release()
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 2)
  }
}
