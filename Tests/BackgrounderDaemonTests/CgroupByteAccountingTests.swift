import Backgrounder
import Locking
import Netlink
import SystemCalls
import Testing

@testable import BackgrounderDaemon

/// ``CgroupByteMeter`` splits a run's per-interface counts metered or not, and
/// ``CgroupByteSession`` falls back to the link's counters — saying so — for a run that got no
/// counter. The kernel side is tested end to end (`DaemonMeteredBudgetTests`).
@Suite struct CgroupByteAccountingTests {
  typealias Key = CgroupByteCounter.Key

  @Test("bytes added on an interface are metered when it was the metered primary link")
  func meterSplitsByTheLinkAtEachReading() {
    // wlan0 = 3 (unmetered), wwan0 = 4 (metered), lo = 1.
    var meter = CgroupByteMeter(loopback: 1, meteredInterface: nil)
    meter.advance(
      to: [
        Key(interfaceIndex: 3, received: false): 1_000,
        Key(interfaceIndex: 3, received: true): 300,
        Key(interfaceIndex: 1, received: false): 50_000,
      ],
      meteredInterface: 4)
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
      meteredInterface: 4)
    meter.advance(
      to: [
        Key(interfaceIndex: 4, received: false): 7_500,
        Key(interfaceIndex: 4, received: true): 900,
      ],
      meteredInterface: nil)
    #expect(meter.bytes.sent == 1_200 + 7_500)
    #expect(meter.bytes.received == 300 + 900)
    #expect(meter.bytes.meteredSent == 7_500)
    #expect(meter.bytes.meteredReceived == 900)
    #expect(meter.bytes.accounting == .cgroup)
  }

  @Test("a first reading after a metered start counts as metered; loopback never counts")
  func meteredFromTheStart() {
    var meter = CgroupByteMeter(loopback: 1, meteredInterface: 4)
    meter.advance(
      to: [
        Key(interfaceIndex: 4, received: false): 600_000,
        Key(interfaceIndex: 1, received: false): 9_999,
      ],
      meteredInterface: 4)
    #expect(meter.bytes.sent == 600_000)
    #expect(meter.bytes.meteredSent == 600_000)
    #expect(meter.bytes.received == 0)
  }

  @Test("a run whose cgroup got no counter is counted by the link, and its record says so")
  func refusedCounterFallsBackToTheLink() {
    let refusals = Lock<[SystemCallError]>([])
    let counters = Lock(LinkCounters(receivedBytes: 10_000, sentBytes: 20_000))
    var accounting = CgroupByteAccounting(
      attach: { (_) throws(SystemCallError) -> CgroupByteCounter in
        throw SystemCallError("bpf prog attach", errno: .permissionDenied)
      },
      interfaceIndex: { $0 == "wwan0" ? 4 : 0 },
      refused: { error in refusals.withLock { $0.append(error) } })
    accounting.fallback = LinkCounterAccounting(readCounters: { _ in counters.withLock { $0 } })
    let conditions = NetworkConditions(isReachable: true, isDataMetered: true, primaryLink: "wwan0")
    let session = accounting.begin(under: conditions)
    session.starting(inCgroup: "/sys/fs/cgroup/backgrounder/runs/1")
    counters.withLock { $0 = LinkCounters(receivedBytes: 10_500, sentBytes: 26_000) }
    let bytes = session.finish(under: conditions)
    #expect(bytes.accounting == .link)
    #expect(bytes.sent == 6_000 && bytes.received == 500)
    #expect(bytes.meteredBytes == 6_500)
    #expect(refusals.withLock { $0.map(\.errno) } == [.permissionDenied])
  }

  @Test("a run without a cgroup is counted by the link; one never started counted nothing")
  func noCgroupAndNeverStarted() {
    let attached = Lock(0)
    var accounting = CgroupByteAccounting(
      attach: { (_) throws(SystemCallError) -> CgroupByteCounter in
        attached.withLock { $0 += 1 }
        throw SystemCallError("bpf prog attach", errno: .permissionDenied)
      })
    accounting.fallback = LinkCounterAccounting(readCounters: { _ in
      LinkCounters(receivedBytes: 1, sentBytes: 1)
    })
    let conditions = NetworkConditions(isReachable: true, primaryLink: "eth0")
    let withoutCgroup = accounting.begin(under: conditions)
    withoutCgroup.starting(inCgroup: nil)
    #expect(withoutCgroup.finish(under: conditions).accounting == .link)
    #expect(attached.withLock { $0 } == 0, "nothing to attach to")
    let neverStarted = accounting.begin(under: conditions)
    #expect(neverStarted.finish(under: conditions) == RunNetworkBytes(accounting: .link))
  }
}
