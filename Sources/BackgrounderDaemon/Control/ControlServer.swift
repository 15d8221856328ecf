import Foundation
import Locking
import Logging
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// The daemon's end of the control socket: a Unix stream socket, mode 0600, answering one JSON
/// request per connection. Peers are checked with `SO_PEERCRED`: only the daemon's own user and
/// root are served. I/O happens on a dedicated thread blocked in `poll` (no wakeups while idle).
public final class ControlServer: Sendable {
  /// Handles one request; runs on the Swift concurrency pool.
  public typealias Handler = @Sendable (ControlRequest) async -> ControlResponse
  /// A new subscription to task changes, for `watch` requests.
  public typealias Changes = @Sendable () -> AsyncStream<TaskChange>

  private let path: String
  private let logger: Logger
  private let handler: Handler
  private let onListening: @Sendable () -> Void
  private let changes: Changes?
  private let onAnswered: (@Sendable () -> Void)?
  /// A socket bound by ``bindNow()``, waiting for ``run()``.
  private let boundListener = Lock<Int32?>(nil)

  /// `onListening` is called once the socket is bound and listening (the daemon's readiness);
  /// `changes` serves `watch` requests; without it they are refused. `onAnswered` is called on
  /// the control thread after each request's answer was written.
  public init(
    path: String, logger: Logger, onListening: @escaping @Sendable () -> Void = {},
    changes: Changes? = nil, onAnswered: (@Sendable () -> Void)? = nil,
    handler: @escaping Handler
  ) {
    self.path = path
    self.logger = logger
    self.onListening = onListening
    self.changes = changes
    self.onAnswered = onAnswered
    self.handler = handler
  }

  deinit {
    if let listener = boundListener.withLock({ $0 }) { close(listener) }
  }

  /// Binds the socket and serves until the calling task is cancelled; removes the socket file
  /// on the way out. Throws `alreadyServed` when another daemon answers on the path.
  public func run() async throws {
    let bound = boundListener.withLock { listener -> Int32? in
      defer { listener = nil }
      return listener
    }
    let listener = try bound ?? bind()
    var wakePipe: [Int32] = [-1, -1]
    guard pipe(&wakePipe) == 0 else {
      close(listener)
      throw ControlSocketError.system(operation: "pipe", path: path, errno: Errno(rawValue: errno))
    }
    let (wake, wakeWriter) = (wakePipe[0], wakePipe[1])
    for fd in wakePipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    defer {
      close(listener)
      close(wake)
      close(wakeWriter)
      unlink(path)
    }
    logger.info("control socket ready", metadata: ["path": "\(path)"])
    onListening()
    await withTaskCancellationHandler {
      await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        let thread = Thread { [self] in
          acceptLoop(listener: listener, wake: wake)
          done.resume()
        }
        thread.name = "backgrounder-control"
        thread.start()
      }
    } onCancel: {
      var one: UInt8 = 1
      _ = write(wakeWriter, &one, 1)
    }
  }

  /// Checks and binds the socket now, so that a socket that cannot be used stops the daemon
  /// before it starts; ``run()`` then serves on it.
  public func bindNow() throws(ControlSocketError) {
    let listener = try bind()
    boundListener.withLock { $0 = listener }
  }

  /// Checks the path (length, a private directory of ours, nothing but a stale socket in the
  /// way), then binds. A stale socket is removed; any other file is left untouched.
  private func bind() throws(ControlSocketError) -> Int32 {
    let socketPath = ControlSocketPath(path: path)
    let address = try socketPath.address()
    try socketPath.prepareDirectory()
    let socketFileExists = try socketPath.socketExists()
    // A socket file with a listener behind it is served, however slowly its daemon would answer
    // a ping on a loaded machine: the kernel queues the connection. Only a refused one is stale.
    if socketFileExists, Self.hasListener(at: address) { throw .alreadyServed(path: path) }
    if socketPath.isAbstract,
      (try? ControlClient(path: path, timeout: .seconds(1)).sendBlocking(.ping)) != nil
    {
      throw .alreadyServed(path: path)
    }
    if socketFileExists { unlink(path) }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else {
      throw .system(operation: "socket", path: path, errno: Errno(rawValue: errno))
    }
    let previousMask = umask(0o177)
    let bound = address.withSocketAddress { Glibc.bind(fd, $0, $1) }
    umask(previousMask)
    guard bound == 0, socketPath.isAbstract || chmod(path, 0o600) == 0, listen(fd, 16) == 0
    else {
      let failure = Errno(rawValue: errno)
      close(fd)
      throw .system(operation: "bind", path: path, errno: failure)
    }
    return fd
  }

  /// Whether a process listens on `address`: a non-blocking connection is accepted into its
  /// backlog (or finds the backlog full) instead of being refused.
  private static func hasListener(at address: UnixSocketAddress) -> Bool {
    let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    let fd = socket(AF_UNIX, flags | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    let connected = address.withSocketAddress { Glibc.connect(fd, $0, $1) }
    return connected == 0 || errno == EAGAIN || errno == EINPROGRESS
  }

  private func acceptLoop(listener: Int32, wake: Int32) {
    var fds = [
      pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
      pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
    ]
    while true {
      let ready = poll(&fds, 2, -1)
      if ready < 0 && errno == EINTR { continue }
      if ready < 0 || fds[1].revents != 0 { return }
      let connection = accept(listener, nil, nil)
      guard connection >= 0 else { continue }
      _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
      if !serve(connection) { close(connection) }
      onAnswered?()
    }
  }

  /// Answers one request; returns true when the connection was handed to a `watch` stream.
  private func serve(_ connection: Int32) -> Bool {
    let response: ControlResponse
    var stream: AsyncStream<TaskChange>?
    if let refusal = PeerCredentials.refusal(for: connection) {
      logger.warning("control request refused", metadata: ["reason": "\(refusal)"])
      response = ControlResponse(ok: false, message: refusal)
    } else {
      ControlFraming.setReceiveTimeout(connection, .seconds(2))
      do {
        let line = try ControlFraming.readLine(connection, path: path)
        let request = try JSONDecoder().decode(ControlRequest.self, from: line)
        if request == .watch {
          stream = changes?()
          response =
            stream == nil
            ? ControlResponse(ok: false, message: "this daemon does not stream task changes")
            : ControlResponse(ok: true, message: "watching")
        } else {
          response = waitFor(request)
        }
      } catch {
        response = ControlResponse(ok: false, message: "bad request: \(error)")
      }
    }
    guard var data = try? JSONEncoder().encode(response) else { return false }
    data.append(UInt8(ascii: "\n"))
    guard (try? ControlFraming.writeAll(connection, data, path: path)) != nil, let stream else {
      return false
    }
    startStreaming(stream, to: connection)
    return true
  }

  /// Writes each change as one JSON line until the stream ends (the daemon stops) or the
  /// client goes away (a write fails; a client stuck for 5 s counts as gone).
  private func startStreaming(_ changes: AsyncStream<TaskChange>, to connection: Int32) {
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    _ = setsockopt(
      connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let path = path
    Task {
      let encoder = JSONEncoder()
      for await change in changes {
        guard var line = try? encoder.encode(change) else { continue }
        line.append(UInt8(ascii: "\n"))
        if (try? ControlFraming.writeAll(connection, line, path: path)) == nil { break }
      }
      close(connection)
    }
  }

  /// Runs the async handler from the control thread and waits for its answer.
  private func waitFor(_ request: ControlRequest) -> ControlResponse {
    let box = ResponseBox()
    let finished = DispatchSemaphore(value: 0)
    Task { [handler] in
      box.set(await handler(request))
      finished.signal()
    }
    finished.wait()
    return box.get()
  }
}
