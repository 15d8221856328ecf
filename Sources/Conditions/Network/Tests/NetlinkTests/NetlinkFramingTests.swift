import Netlink
import Testing

@Suite struct NetlinkFramingTests {
  private func header(length: UInt32, type: UInt16 = 3) -> [UInt8] {
    NetlinkHeader(length: length, type: type, flags: 0, sequence: 0, portID: 0).encoded
  }

  @Test func splitsConsecutiveMessagesOnFourByteBoundaries() throws {
    let first = header(length: 21) + [1, 2, 3, 4, 5, 0, 0, 0]  // 21 bytes + 3 padding
    let second = header(length: 20) + [0, 0, 0, 0]
    let frames = NetlinkFraming.frames(in: first + second)
    #expect(frames.count == 2)
    #expect(try frames[0].get().count == 21)
    #expect(try frames[1].get().count == 20)
  }

  @Test func reportsTruncatedHeader() {
    let frames = NetlinkFraming.frames(in: [1, 2, 3])
    #expect(frames.count == 1)
    guard case .failure(let error) = frames[0] else {
      Issue.record("expected a failure")
      return
    }
    #expect(error.reason.contains("truncated header"))
  }

  @Test func reportsLengthBeyondDatagram() {
    let frames = NetlinkFraming.frames(in: header(length: 400) + [0, 0, 0, 0])
    guard case .failure(let error) = frames.last else {
      Issue.record("expected a failure")
      return
    }
    #expect(error.reason == "nlmsg_len 400 exceeds the 20 bytes available")
    #expect(error.messageType == 3)
  }

  @Test func reportsLengthSmallerThanHeaderAndStops() {
    let frames = NetlinkFraming.frames(in: header(length: 8) + header(length: 16))
    #expect(frames.count == 1)
    guard case .failure(let error) = frames[0] else {
      Issue.record("expected a failure")
      return
    }
    #expect(error.reason.contains("smaller than the 16-byte header"))
  }
}
