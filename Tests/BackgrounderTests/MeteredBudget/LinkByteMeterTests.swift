import Backgrounder
import Testing

/// ``LinkByteMeter`` splits a run's link-counter growth by whether the link was metered.
@Suite struct LinkByteMeterTests {
  typealias Reading = LinkByteMeter.Reading

  @Test("each segment's growth is added, as metered when its link was")
  func segmentsSplitMeteredFromUnmetered() {
    var meter = LinkByteMeter(
      start: Reading(interface: "wlan0", metered: false, received: 1_000, sent: 500))
    // One-second reading on the same link.
    let middle = Reading(interface: "wlan0", metered: false, received: 3_000, sent: 900)
    meter.advance(end: middle, next: middle)
    // The primary link changes to a metered modem.
    meter.advance(
      end: Reading(interface: "wlan0", metered: false, received: 3_500, sent: 1_000),
      next: Reading(interface: "wwan0", metered: true, received: 70_000, sent: 40_000))
    meter.advance(
      end: Reading(interface: "wwan0", metered: true, received: 70_600, sent: 40_100), next: nil)
    #expect(meter.bytes.received == 2_500 + 600)
    #expect(meter.bytes.sent == 500 + 100)
    #expect(meter.bytes.meteredReceived == 600)
    #expect(meter.bytes.meteredSent == 100)
    #expect(meter.bytes.meteredBytes == 700)
    #expect(meter.bytes.bytes == 3_700)
    #expect(meter.bytes.accounting == .link)
  }

  @Test("no primary link counts nothing; a recreated link counts from zero")
  func gapsAndResets() {
    var meter = LinkByteMeter(start: nil)
    meter.advance(
      end: nil, next: Reading(interface: "eth0", metered: true, received: 5_000, sent: 5_000))
    // The link was recreated: its counters went down.
    meter.advance(
      end: Reading(interface: "eth0", metered: true, received: 300, sent: 200), next: nil)
    #expect(meter.bytes.received == 300)
    #expect(meter.bytes.meteredSent == 200)
    // A reading of another interface does not close a segment with a wrong difference.
    var other = LinkByteMeter(
      start: Reading(interface: "eth0", metered: false, received: 10, sent: 10))
    other.advance(
      end: Reading(interface: "wlan0", metered: false, received: 9_999, sent: 9_999), next: nil)
    #expect(other.bytes.bytes == 0)
  }
}
