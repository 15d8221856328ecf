import Backgrounder
import Locking
import Netlink
import SystemCalls
import Testing

@testable import BackgrounderDaemon

/// ``CgroupByteMeter`` splits a run's per-interface counts metered or not, and
/// ``CgroupByteSession`` reads its cgroup's counts (deleting them when the run ends) or falls
/// back to the link's counters — saying so — for a run without a cgroup. The kernel side is
/// tested end to end (`DaemonMeteredBudgetTests`).
@Suite struct CgroupByteAccountingTests {
  typealias Key = RunByteCounters.Key

  @Test("bytes added on an interface are metered when it was metered at the last reading")
  func meterSplitsByTheLinkAtEachReading() {
    // wlan0 = 3 (unmetered), wwan0 = 4 (metered), lo = 1.
    var meter = CgroupByteMeter(loopback: 1, meteredInterfaces: [])
    meter.advance(
      to: [
        Key(interfaceIndex: 3, received: false): 1_000,
        Key(interfaceIndex: 3, received: true): 300,
        Key(interfaceIndex: 1, received: false): 50_000,
      ],
      meteredInterfaces: [4])
    // The primary link changed to the metered modem: what wwan0 adds from here is metered;
    // wlan0's late bytes are not.
    meter.advance(
      to: [
        Key(interfaceIndex: 3, received: false): 1_200,
        Key(interfaceIndex: 3, received: true): 300,
        Key(interfaceIndex: 4, received: false): 7_000,
        Key(interfaceIndex: 4, received: true): 900,
        Key(interfaceIndex: 1, received: true): 50_000,
      ],
      meteredInterfaces: [4])
    meter.advance(
      to: [
        Key(interfaceIndex: 4, received: false): 7_500,
        Key(interfaceIndex: 4, received: true): 900,
      ],
      meteredInterfaces: [])
    #expect(meter.bytes.sent == 1_200 + 7_500)
    #expect(meter.bytes.received == 300 + 900)
    #expect(meter.bytes.meteredSent == 7_500)
    #expect(meter.bytes.meteredReceived == 900)
    #expect(meter.bytes.accounting == .cgroup)
  }

  @Test("a first reading after a metered start counts as metered; loopback never counts")
  func meteredFromTheStart() {
    var meter = CgroupByteMeter(loopback: 1, meteredInterfaces: [4])
    meter.advance(
      to: [
        Key(interfaceIndex: 4, received: false): 600_000,
        Key(interfaceIndex: 1, received: false): 9_999,
      ],
      meteredInterfaces: [4])
    #expect(meter.bytes.sent == 600_000)
    #expect(meter.bytes.meteredSent == 600_000)
    #expect(meter.bytes.received == 0)
  }

  @Test("bytes on a metered link that is not the primary one are metered")
  func meteredLinkBesidesThePrimary() {
    // wlan0 = 3, primary and unmetered; wwan0 = 4, metered, with a route to one destination.
    let counters = FakeCounters()
    var accounting = CgroupByteAccounting(
      counters: counters, cgroupID: { _ in 42 },
      interfaceIndex: { ["lo": 1, "wlan0": 3, "wwan0": 4][$0] ?? 0 })
    accounting.meteredLinks = { [4] }
    let wifi = NetworkConditions(isReachable: true, isDataMetered: false, primaryLink: "wlan0")
    let session = accounting.begin(under: wifi)
    session.starting(inCgroup: "/cg/runs/1")
    counters.counts.withLock {
      $0[42] = [
        Key(interfaceIndex: 3, received: false): 1_000,
        Key(interfaceIndex: 4, received: false): 600_000,
        Key(interfaceIndex: 4, received: true): 2_000,
      ]
    }
    let bytes = session.finish(under: wifi)
    #expect(bytes.sent == 601_000 && bytes.received == 2_000)
    #expect(bytes.meteredSent == 600_000 && bytes.meteredReceived == 2_000)
    // The primary link metered counts as before, with or without the monitor's list.
    accounting.meteredLinks = { [] }
    #expect(accounting.meteredInterfaces(wifi).isEmpty)
    let cellular = NetworkConditions(isReachable: true, isDataMetered: true, primaryLink: "wwan0")
    #expect(accounting.meteredInterfaces(cellular) == [4])
  }

  /// Counts set by the test, per cgroup; what was asked, in order.
  final class FakeCounters: RunByteCounting {
    let counts = Lock<[UInt64: [Key: UInt64]]>([:])
    let calls = Lock<[String]>([])

    func begin(_ cgroup: UInt64) {
      calls.withLock { $0.append("begin \(cgroup)") }
    }

    func counts(of cgroup: UInt64, ending: Bool) throws(SystemCallError) -> [Key: UInt64] {
      calls.withLock { $0.append((ending ? "end " : "read ") + "\(cgroup)") }
      return counts.withLock { $0[cgroup] ?? [:] }
    }
  }

  @Test("a run with a cgroup is counted by its cgroup's counts: read, then ended")
  func runWithACgroup() {
    let counters = FakeCounters()
    let accounting = CgroupByteAccounting(
      counters: counters, cgroupID: { $0 == "/cg/runs/1" ? 42 : nil },
      interfaceIndex: { ["lo": 1, "wwan0": 4][$0] ?? 0 })
    let metered = NetworkConditions(isReachable: true, isDataMetered: true, primaryLink: "wwan0")
    let session = accounting.begin(under: metered)
    session.starting(inCgroup: "/cg/runs/1")
    counters.counts.withLock { $0[42] = [Key(interfaceIndex: 4, received: false): 1_000] }
    #expect(session.read(under: metered).meteredSent == 1_000)
    counters.counts.withLock {
      $0[42] = [
        Key(interfaceIndex: 4, received: false): 1_500,
        Key(interfaceIndex: 4, received: true): 200,
        Key(interfaceIndex: 1, received: true): 9_000,
      ]
    }
    let bytes = session.finish(under: metered)
    #expect(
      bytes
        == RunNetworkBytes(
          sent: 1_500, received: 200, meteredSent: 1_500, meteredReceived: 200,
          accounting: .cgroup))
    #expect(counters.calls.withLock { $0 } == ["begin 42", "read 42", "end 42"])
  }

  @Test("a run whose cgroup cannot be read is counted by the link, and its record says so")
  func unreadableCgroupFallsBackToTheLink() {
    let counts = Lock(LinkCounters(receivedBytes: 10_000, sentBytes: 20_000))
    let counters = FakeCounters()
    var accounting = CgroupByteAccounting(
      counters: counters, cgroupID: { _ in nil }, interfaceIndex: { $0 == "wwan0" ? 4 : 0 })
    accounting.fallback = LinkCounterAccounting(readCounters: { _ in counts.withLock { $0 } })
    let conditions = NetworkConditions(isReachable: true, isDataMetered: true, primaryLink: "wwan0")
    let session = accounting.begin(under: conditions)
    session.starting(inCgroup: "/sys/fs/cgroup/backgrounder/runs/1")
    counts.withLock { $0 = LinkCounters(receivedBytes: 10_500, sentBytes: 26_000) }
    let bytes = session.finish(under: conditions)
    #expect(bytes.accounting == .link)
    #expect(bytes.sent == 6_000 && bytes.received == 500)
    #expect(bytes.meteredBytes == 6_500)
    #expect(counters.calls.withLock { $0 }.isEmpty)
  }

  @Test("a run without a cgroup is counted by the link; one never started counted nothing")
  func noCgroupAndNeverStarted() {
    let counters = FakeCounters()
    var accounting = CgroupByteAccounting(counters: counters, cgroupID: { _ in 7 })
    accounting.fallback = LinkCounterAccounting(readCounters: { _ in
      LinkCounters(receivedBytes: 1, sentBytes: 1)
    })
    let conditions = NetworkConditions(isReachable: true, primaryLink: "eth0")
    let withoutCgroup = accounting.begin(under: conditions)
    withoutCgroup.starting(inCgroup: nil)
    #expect(withoutCgroup.finish(under: conditions).accounting == .link)
    let neverStarted = accounting.begin(under: conditions)
    #expect(neverStarted.finish(under: conditions) == RunNetworkBytes(accounting: .link))
    #expect(counters.calls.withLock { $0 }.isEmpty)
  }
}
