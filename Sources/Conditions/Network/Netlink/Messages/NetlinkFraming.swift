/// Splits a netlink datagram into its messages, checking every `nlmsg_len` against the bytes
/// that are really there, so no later stage ever reads past a message.
public enum NetlinkFraming {
  /// One message cut out of a datagram, or the reason the rest of the datagram was unusable.
  public typealias Frame = Result<ArraySlice<UInt8>, MalformedMessage>

  /// The messages in `datagram`, in order. A bad header makes the remainder of the datagram
  /// unusable (its length cannot be trusted), so it ends the list with one failure.
  public static func frames(in datagram: [UInt8]) -> [Frame] {
    var frames: [Frame] = []
    var offset = 0
    while offset < datagram.count {
      let remaining = datagram.count - offset
      guard let header = NetlinkHeader(decoding: datagram[offset...]) else {
        frames.append(.failure(MalformedMessage("truncated header: only \(remaining) bytes")))
        break
      }
      let length = Int(header.length)
      if length < NetlinkHeader.size {
        frames.append(
          .failure(
            MalformedMessage(
              "nlmsg_len \(length) is smaller than the 16-byte header",
              messageType: header.type)))
        break
      }
      if length > remaining {
        frames.append(
          .failure(
            MalformedMessage(
              "nlmsg_len \(length) exceeds the \(remaining) bytes available",
              messageType: header.type)))
        break
      }
      frames.append(.success(datagram[offset..<offset + length]))
      offset += alignedLength(length)
    }
    return frames
  }

  /// `NLMSG_ALIGN` / `RTA_ALIGN`: rounds up to a multiple of 4.
  static func alignedLength(_ length: Int) -> Int { (length + 3) & ~3 }
}
