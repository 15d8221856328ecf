import EventLoops
import Foundation
import Locking
import Logging
import SystemCalls
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// The daemon's end of the control socket: a Unix stream socket, mode 0600, answering one JSON
/// request per connection. Peers are checked with `SO_PEERCRED`: only the daemon's own user and
/// root are served. Every connection is served on its own, non-blocking, on an ``EventLoop``
/// (``ControlConnections``): a silent, slow or stopped client never delays another one.
package final class ControlServer: Sendable {
  /// Handles one request; runs on the Swift concurrency pool.
  package typealias Handler = @Sendable (ControlRequest) async -> ControlResponse
  /// A new subscription to task changes, for `watch` requests.
  package typealias Changes = @Sendable () -> AsyncStream<TaskChange>

  /// What one client may hold of the daemon.
  package struct Limits: Sendable {
    /// From accepting a connection to its complete request line; then it is answered with an
    /// error and closed, and the request (never complete) is not run.
    package var requestDeadline: Duration = .seconds(5)
    /// For writing an answer, or the last lines to a watcher being dropped.
    package var answerDeadline: Duration = .seconds(5)
    /// Connections open at once per peer uid; more are refused.
    package var connectionsPerUser = 128
    /// Bytes of changes queued for a watcher that does not read; beyond it, the watcher is
    /// told and dropped.
    package var watcherBacklog = 256 * 1024

    package init() {}
  }

  private let path: String
  private let logger: Logger
  private let eventLoop: EventLoop?
  private let limits: Limits
  private let handler: Handler
  private let onListening: @Sendable () -> Void
  private let changes: Changes?
  /// A socket bound by ``bindNow()``, waiting for ``run()``.
  private let boundListener = Lock<Int32?>(nil)

  /// `onListening` is called once the socket is bound and listening (the daemon's readiness);
  /// `changes` serves `watch` requests; without it they are refused. Without `eventLoop`, the
  /// server is served by the process's shared loop (`EventLoop.shared()`).
  package init(
    path: String, logger: Logger, eventLoop: EventLoop? = nil, limits: Limits = Limits(),
    onListening: @escaping @Sendable () -> Void = {},
    changes: Changes? = nil, handler: @escaping Handler
  ) {
    self.path = path
    self.logger = logger
    self.eventLoop = eventLoop
    self.limits = limits
    self.onListening = onListening
    self.changes = changes
    self.handler = handler
  }

  deinit {
    if let listener = boundListener.withLock({ $0 }) { close(listener) }
  }

  /// Binds the socket and serves until the calling task is cancelled; then answers the
  /// requests already taken (each within the answer deadline), closes every connection and
  /// removes the socket file. Throws `alreadyServed` when another daemon answers on the path.
  package func run() async throws {
    let bound = boundListener.withLock { listener -> Int32? in
      defer { listener = nil }
      return listener
    }
    let listener = try bound ?? bind()
    defer {
      close(listener)
      unlink(path)
    }
    let loop: EventLoop
    do throws(SystemCallError) {
      if let eventLoop { loop = eventLoop } else { loop = try EventLoop.shared() }
    } catch {
      throw ControlSocketError.system(
        SystemCallError(error.operation, path: path, errno: error.errno))
    }
    let connections = ControlConnections(
      listener: listener, loop: loop, path: path, logger: logger, limits: limits,
      changes: changes, handler: handler)
    if let failure = await loop.submit({ connections.start() }) {
      throw ControlSocketError.system(
        SystemCallError(failure.operation, path: path, errno: failure.errno))
    }
    logger.info("control socket ready", metadata: ["path": "\(path)"])
    onListening()
    let (cancelled, cancel) = AsyncStream<Never>.makeStream()
    await withTaskCancellationHandler {
      for await _ in cancelled {}
    } onCancel: {
      cancel.finish()
    }
    await withCheckedContinuation { (stopped: CheckedContinuation<Void, Never>) in
      loop.execute { connections.stop { stopped.resume() } }
    }
  }

  /// Checks and binds the socket now, so that a socket that cannot be used stops the daemon
  /// before it starts; ``run()`` then serves on it.
  package func bindNow() throws(ControlSocketError) {
    let listener = try bind()
    boundListener.withLock { $0 = listener }
  }

  /// Checks the path (length, a private directory of ours, nothing but a stale socket in the
  /// way), then binds a non-blocking listener. A stale socket is removed; any other file is left
  /// untouched.
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
    let flags = SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue
    let fd = socket(AF_UNIX, Int32(flags), 0)
    guard fd >= 0 else {
      throw .system(.current("socket", path: path))
    }
    // No umask around bind: it is process-wide, and a file or directory another thread creates
    // meanwhile would get its mode (seen in tests). The directory is private (0700, checked
    // above), so nobody else reaches the socket before its chmod to 0600.
    let bound = address.withSocketAddress { Glibc.bind(fd, $0, $1) }
    guard bound == 0, socketPath.isAbstract || chmod(path, 0o600) == 0, listen(fd, SOMAXCONN) == 0
    else {
      let failure = SystemCallError.current("bind", path: path)
      close(fd)
      throw .system(failure)
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
    if connected == 0 { return true }
    let failure = SystemCallError.current("connect").errno
    return failure == .resourceTemporarilyUnavailable || failure == .nowInProgress
  }
}
