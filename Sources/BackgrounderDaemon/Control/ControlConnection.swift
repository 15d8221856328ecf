import EventLoops

/// One client of the control socket, as ``ControlConnections`` serves it. Touched on the event
/// loop's thread only.
final class ControlConnection {
  /// Where the exchange stands.
  enum Phase: Equatable {
    /// Waiting for the request line (until the request deadline).
    case reading
    /// The request is with the handler.
    case handling
    /// Writing the answer; then close, or stream changes.
    case answering(thenWatch: Bool)
    /// Streaming task changes to `status --watch`.
    case watching
    /// Writing the last lines (the watcher fell behind, or the daemon stops), then closing.
    case closing
  }

  let id: UInt64
  let descriptor: Int32
  let uid: UInt32
  var registration: EventLoop.Registration?
  var interest: EventLoop.Interest = .readable
  var phase = Phase.reading
  var request = RequestBuffer()
  var output = OutputBuffer()
  /// The request or answer deadline, while one runs.
  var deadline: EventLoop.Timer?
  /// Feeds a watcher its changes; cancelled when the connection closes.
  var watch: Task<Void, Never>?

  init(id: UInt64, descriptor: Int32, uid: UInt32) {
    self.id = id
    self.descriptor = descriptor
    self.uid = uid
  }

  /// Whether the connection reads from its client in this phase: for the request, and while
  /// watching, to notice at once that the client went away.
  var reads: Bool {
    switch phase {
    case .reading, .watching, .closing: true
    case .handling, .answering: false
    }
  }

  /// What to wait for: reading as above, writing while output is pending.
  var wantedInterest: EventLoop.Interest {
    var interest: EventLoop.Interest = reads ? .readable : []
    if !output.isEmpty { interest.insert(.writable) }
    return interest
  }
}

/// The bytes of a request line as they arrive, up to ``ControlFraming/maximumMessageSize``.
struct RequestBuffer {
  /// What the bytes so far amount to.
  enum Progress: Equatable {
    case incomplete
    /// The line, without its newline (anything after it is ignored).
    case line([UInt8])
    case tooLong
  }

  private var bytes: [UInt8] = []

  mutating func append(_ chunk: some Collection<UInt8>) -> Progress {
    if let newline = chunk.firstIndex(of: UInt8(ascii: "\n")) {
      bytes.append(contentsOf: chunk[..<newline])
      return bytes.count > ControlFraming.maximumMessageSize ? .tooLong : .line(bytes)
    }
    bytes.append(contentsOf: chunk)
    return bytes.count > ControlFraming.maximumMessageSize ? .tooLong : .incomplete
  }
}

/// Bytes written to a connection but not yet taken by its socket.
struct OutputBuffer {
  private var bytes: [UInt8] = []
  private var sent = 0

  var isEmpty: Bool { sent == bytes.count }
  /// Bytes still to send.
  var count: Int { bytes.count - sent }

  mutating func append(_ line: some Sequence<UInt8>) {
    if sent > 0 {
      bytes.removeFirst(sent)
      sent = 0
    }
    bytes.append(contentsOf: line)
  }

  /// Calls `send` with what is pending until all is sent or it takes nothing (returns 0: the
  /// socket is full, or the send failed and the caller noted why).
  mutating func drain(_ send: (UnsafeRawBufferPointer) -> Int) {
    while !isEmpty {
      let taken = bytes.withUnsafeBytes { send(UnsafeRawBufferPointer(rebasing: $0[sent...])) }
      guard taken > 0 else { return }
      sent += taken
    }
    bytes = []
    sent = 0
  }
}
