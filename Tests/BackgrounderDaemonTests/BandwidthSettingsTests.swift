import Backgrounder
import SystemCalls
import Testing

@testable import BackgrounderDaemon

/// `bandwidth`, `metered-bandwidth` and `bandwidth-required` of a job: values, errors that name
/// the key, and the plan for a run (which cap on which link, or why none).
@Suite struct BandwidthSettingsTests {
  @Test(
    arguments: [
      ("2Mbit", 2_000_000), ("500kbit", 500_000), ("1.5Mbit", 1_500_000),
      ("10Gbit", 10_000_000_000),
      ("64000bit", 64_000), ("2mbit", 2_000_000), ("500Kbit", 500_000),
    ] as [(String, UInt64)])
  func ratesAreBitsPerSecond(text: String, bits: UInt64) throws {
    #expect(try BandwidthCap.parseRate(text) == bits)
  }

  @Test func bothKeysAreRead() throws {
    let job = try parseJob(
      id: "dev.example.sync",
      "bandwidth = \"2Mbit\"\nmetered-bandwidth = \"500kbit\"\nbandwidth-required = true")
    #expect(job?.bandwidth == BandwidthCap(rate: 2_000_000, meteredRate: 500_000, required: true))
    #expect(try parseJob(id: "dev.example.sync", "")?.bandwidth == nil)
    let meteredOnly = try parseJob(id: "dev.example.sync", "metered-bandwidth = \"500kbit\"")
    #expect(meteredOnly?.bandwidth == BandwidthCap(meteredRate: 500_000))
  }

  @Test(arguments: [
    ("bandwidth", "2MB", "bytes are not accepted"), ("bandwidth", "fast", "bits per second"),
    ("bandwidth", "2 Mbit", "a number"), ("metered-bandwidth", "kbit", "a number"),
    ("metered-bandwidth", "1kbit", "out of range"), ("bandwidth", "40Gbit", "out of range"),
    ("bandwidth", "-2Mbit", "a number"),
  ])
  func badRatesNameTheKey(key: String, text: String, message: String) {
    #expect {
      try parseJob(id: "dev.example.sync", "\(key) = \"\(text)\"")
    } throws: { error in
      "\(error)".contains(key) && "\(error)".contains(message) && "\(error)".contains(text)
    }
  }

  /// A cap that must be applied needs the link it shapes: without a `network` key the job
  /// waits for a known, reachable network. Without this, such a job was decided before the
  /// daemon knew its primary link at start, and each of its first runs was deferred ("no
  /// primary link to shape") and tried again a backoff later.
  @Test("bandwidth-required without a network key waits for a network; other keys stay")
  func requiredCapNeedsANetwork() throws {
    func network(_ keys: String) throws -> NetworkRequirement {
      let job = try #require(try parseJob(id: "dev.example.sync", keys))
      switch try JobRequests.request(for: job, origin: .config) {
      case .oneTime(let request): return request.constraints.networkRequired
      case .periodic(let request): return request.constraints.networkRequired
      }
    }
    #expect(try network("bandwidth = \"2Mbit\"\nbandwidth-required = true") == .any)
    #expect(
      try network(
        "metered-bandwidth = \"500kbit\"\nbandwidth-required = true") == .any)
    #expect(
      try network(
        "network = \"unmetered\"\nbandwidth = \"2Mbit\"\nbandwidth-required = true")
        == .unmetered)
    #expect(try network("bandwidth = \"2Mbit\"") == NetworkRequirement.none)
    #expect(try network("") == NetworkRequirement.none)
  }

  @Test func requiredNeedsACap() {
    #expect {
      try parseJob(id: "dev.example.sync", "bandwidth-required = true")
    } throws: { error in
      "\(error)".contains("bandwidth-required") && "\(error)".contains("needs `bandwidth`")
    }
  }

  @Test func ratesFormatAsTheyAreWritten() {
    #expect(BandwidthCap.format(2_000_000) == "2Mbit")
    #expect(BandwidthCap.format(500_000) == "500kbit")
    #expect(BandwidthCap.format(1_500_000) == "1500kbit")
    #expect(BandwidthCap.format(8_500) == "8500bit")
  }

  private let available = ShapingSupport.netPrio(directory: "/sys/fs/cgroup/net_prio/backgrounder")

  @Test("the metered cap applies on a metered link, the plain one otherwise")
  func planPicksTheCapForTheLink() {
    let cap = BandwidthCap(rate: 2_000_000, meteredRate: 500_000)
    #expect(
      ShapingDecision.decide(cap: cap, primaryLink: "wwan0", metered: true, support: available)
        == .shape(interface: "wwan0", bitsPerSecond: 500_000))
    #expect(
      ShapingDecision.decide(cap: cap, primaryLink: "eth0", metered: false, support: available)
        == .shape(interface: "eth0", bitsPerSecond: 2_000_000))
    let plainOnly = BandwidthCap(rate: 2_000_000)
    #expect(
      ShapingDecision.decide(
        cap: plainOnly, primaryLink: "wwan0", metered: true, support: available)
        == .shape(interface: "wwan0", bitsPerSecond: 2_000_000))
    let meteredOnly = BandwidthCap(meteredRate: 500_000)
    #expect(
      ShapingDecision.decide(
        cap: meteredOnly, primaryLink: "eth0", metered: false, support: available) == .unshaped)
    #expect(
      ShapingDecision.decide(cap: nil, primaryLink: "eth0", metered: true, support: available)
        == .unshaped)
  }

  @Test("a cap that cannot be enforced says why, and whether the job must wait")
  func planWithoutSupport() {
    let missing = ShapingSupport.unavailable("no net_prio")
    #expect(
      ShapingDecision.decide(
        cap: BandwidthCap(rate: 2_000_000, required: true), primaryLink: "eth0", metered: false,
        support: missing) == .unenforceable(reason: "no net_prio", required: true))
    #expect(
      ShapingDecision.decide(
        cap: BandwidthCap(rate: 2_000_000), primaryLink: nil, metered: false, support: available)
        == .unenforceable(reason: "no primary link to shape", required: false))
  }

  @Test("each capped run gets the lowest free class slot; a freed slot is reused")
  func slots() {
    var slots = ShapingSlots()
    #expect(slots.assign("a") == 0)
    #expect(slots.assign("b") == 1)
    #expect(slots.assign("c") == 2)
    slots.release(1)
    #expect(slots.assign("d") == 1)
    #expect(slots.owners == [0: "a", 1: "d", 2: "c"])
  }

  @Test("support needs CAP_NET_ADMIN and run cgroups with BPF, or a mounted net_prio hierarchy")
  func detection() {
    let v1 = """
      30 25 0:26 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu
      31 25 0:27 / /sys/fs/cgroup/net_cls,net_prio rw,relatime shared:10 - cgroup cgroup rw,net_cls,net_prio
      """
    #expect(RunShaping.netPrioMount(v1) == "/sys/fs/cgroup/net_cls,net_prio")
    let v2 = "25 1 0:23 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
    #expect(RunShaping.netPrioMount(v2) == nil)
    #expect(
      RunShaping.detect(mountinfo: v2, hasNetAdmin: true).unavailableReason?.contains(
        "no cgroup v1 net_prio hierarchy") == true)
    #expect(
      RunShaping.detect(mountinfo: v1, hasNetAdmin: false).unavailableReason?.contains(
        "CAP_NET_ADMIN") == true)
    // Runs with a cgroup v2 each: the BPF classifier, when the kernel takes it.
    #expect(
      RunShaping.detect(mountinfo: v2, hasNetAdmin: true, runCgroups: true, loadsPrograms: { nil })
        == .cgroupPriority)
    let refused = RunShaping.detect(
      mountinfo: v2, hasNetAdmin: true, runCgroups: true,
      loadsPrograms: { SystemCallError("bpf prog load", errno: .permissionDenied) })
    #expect(
      refused.unavailableReason?.hasPrefix("the kernel refused the classifier on run cgroups")
        == true, "\(refused)")
    #expect(
      RunShaping.detect(
        mountinfo: v2, hasNetAdmin: false, runCgroups: true, loadsPrograms: { nil }
      ).unavailableReason?.contains("CAP_NET_ADMIN") == true)
  }
}

/// `doctor` on a job's cap: ok when it can be enforced, a note when runs would go uncapped, a
/// problem when `bandwidth-required` would keep them from starting.
@Suite struct BandwidthDoctorTests {
  private let doctor = Doctor(configPath: "/nonexistent.toml", unitPaths: [])

  private func job(_ cap: BandwidthCap) -> JobDefinition {
    var job = JobDefinition(
      id: "dev.example.sync", command: ["/bin/true"], schedule: .once(delay: .zero))
    job.bandwidth = cap
    return job
  }

  @Test func findings() {
    let missing = ShapingSupport.unavailable("no cgroup v1 net_prio hierarchy is mounted")
    let uncapped = doctor.checkBandwidth(
      of: job(BandwidthCap(rate: 2_000_000, meteredRate: 500_000)), support: missing)
    #expect(uncapped.map(\.severity) == [.note])
    #expect(
      uncapped.first?.message
        == "the bandwidth cap (2Mbit, 500kbit on metered links) cannot be enforced: no cgroup v1 "
        + "net_prio hierarchy is mounted; its runs go uncapped")
    let held = doctor.checkBandwidth(
      of: job(BandwidthCap(rate: 2_000_000, required: true)), support: missing)
    #expect(held.map(\.severity) == [.problem])
    #expect(
      held.first?.message.hasSuffix("with bandwidth-required = true its runs do not start") == true)
    let enforced = doctor.checkBandwidth(
      of: job(BandwidthCap(rate: 2_000_000)), support: .netPrio(directory: "/x/backgrounder"))
    #expect(enforced.map(\.severity) == [.ok])
    #expect(doctor.checkBandwidth(of: job(BandwidthCap()), support: missing).count == 1)
  }
}
