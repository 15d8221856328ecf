/// One delivery from a ``UeventSource``.
public enum UeventInput: Sendable, Equatable {
  /// One datagram exactly as received (parsed later by ``UeventParser``).
  case datagram([UInt8])
  /// The kernel dropped messages (`ENOBUFS`): whatever changed, a full re-read is needed.
  case overflow
}

/// Where ``PowerProbe`` gets uevents from: the kernel socket (``NetlinkUeventSocket``) in
/// production, recorded datagrams in tests.
public protocol UeventSource: Sendable {
  /// Starts delivering. Called once per ``PowerProbe/run()``; the stream ends when the source
  /// closes and throws when it fails. Cancelling the consumer stops the source.
  func inputs() throws -> AsyncThrowingStream<UeventInput, any Error>
}
