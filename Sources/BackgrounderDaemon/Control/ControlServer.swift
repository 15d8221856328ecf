import Foundation
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

  private let path: String
  private let logger: Logger
  private let handler: Handler
  private let onListening: @Sendable () -> Void

  /// `onListening` is called once the socket is bound and listening (the daemon's readiness).
  public init(
    path: String, logger: Logger, onListening: @escaping @Sendable () -> Void = {},
    handler: @escaping Handler
  ) {
    self.path = path
    self.logger = logger
    self.onListening = onListening
    self.handler = handler
  }

  /// Binds the socket and serves until the calling task is cancelled; removes the socket file
  /// on the way out. Throws `alreadyServed` when another daemon answers on the path.
  public func run() async throws {
    let listener = try bind()
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

  private func bind() throws(ControlSocketError) -> Int32 {
    if (try? ControlClient(path: path, timeout: .seconds(1)).sendBlocking(.ping)) != nil {
      throw .alreadyServed(path: path)
    }
    let directory = (path as NSString).deletingLastPathComponent
    try? FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    unlink(path)
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else {
      throw .system(operation: "socket", path: path, errno: Errno(rawValue: errno))
    }
    let address: UnixSocketAddress
    do {
      address = try UnixSocketAddress(path: path)
    } catch {
      close(fd)
      throw .system(operation: "address", path: path, errno: error)
    }
    let previousMask = umask(0o177)
    let bound = address.withSocketAddress { Glibc.bind(fd, $0, $1) }
    umask(previousMask)
    guard bound == 0, chmod(path, 0o600) == 0, listen(fd, 16) == 0 else {
      let failure = Errno(rawValue: errno)
      close(fd)
      throw .system(operation: "bind", path: path, errno: failure)
    }
    return fd
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
      serve(connection)
      close(connection)
    }
  }

  private func serve(_ connection: Int32) {
    let response: ControlResponse
    if let refusal = PeerCredentials.refusal(for: connection) {
      logger.warning("control request refused", metadata: ["reason": "\(refusal)"])
      response = ControlResponse(ok: false, message: refusal)
    } else {
      ControlFraming.setReceiveTimeout(connection, .seconds(2))
      do {
        let line = try ControlFraming.readLine(connection, path: path)
        let request = try JSONDecoder().decode(ControlRequest.self, from: line)
        response = waitFor(request)
      } catch {
        response = ControlResponse(ok: false, message: "bad request: \(error)")
      }
    }
    guard var data = try? JSONEncoder().encode(response) else { return }
    data.append(UInt8(ascii: "\n"))
    try? ControlFraming.writeAll(connection, data, path: path)
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
