import CSystemShims

extension EventLoop {
  /// What a registration waits for.
  public struct Interest: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Data to read, a connection to accept, or the peer closed its end (a read returns 0).
    public static let readable = Interest(rawValue: 1)
    /// Room to write.
    public static let writable = Interest(rawValue: 2)

    var epollEvents: UInt32 {
      var events: UInt32 = 0
      if contains(.readable) { events |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
      if contains(.writable) { events |= EPOLLOUT.rawValue }
      return events
    }
  }

  /// What a descriptor is ready for.
  public struct Readiness: Sendable, Hashable {
    /// There is data to read, a connection to accept, or the peer closed its end.
    public var isReadable: Bool
    /// There is room to write.
    public var isWritable: Bool
    /// Both directions are closed (`EPOLLHUP`): reported whatever the interest, so a source
    /// that does not read any more must close or deregister the descriptor.
    public var isHangUp: Bool
    /// The descriptor has a pending error (`EPOLLERR`).
    public var isError: Bool

    public init(isReadable: Bool, isWritable: Bool, isHangUp: Bool, isError: Bool) {
      self.isReadable = isReadable
      self.isWritable = isWritable
      self.isHangUp = isHangUp
      self.isError = isError
    }

    init(epollEvents events: UInt32) {
      self.init(
        isReadable: events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0,
        isWritable: events & EPOLLOUT.rawValue != 0,
        isHangUp: events & EPOLLHUP.rawValue != 0,
        isError: events & EPOLLERR.rawValue != 0)
    }
  }

  /// A descriptor watched by the loop; pass it to ``EventLoop/setInterest(_:_:)`` and
  /// ``EventLoop/deregister(_:)``.
  public struct Registration: Sendable, Hashable {
    let id: UInt64
    /// The watched descriptor.
    public let descriptor: Int32
  }

  /// A scheduled closure; pass it to ``EventLoop/cancel(_:)``.
  public struct Timer: Sendable, Hashable {
    let id: UInt64
  }
}
