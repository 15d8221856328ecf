import Foundation
import Locking
import SystemCalls
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// Sends one `ControlRequest` to the daemon's control socket and waits for its response.
package struct ControlClient: Sendable {
  /// The socket path.
  package var path: String
  /// How long to wait for the daemon's answer.
  package var timeout: Duration

  package init(path: String, timeout: Duration = .seconds(10)) {
    self.path = path
    self.timeout = timeout
  }

  /// Sends `request`; throws `ControlSocketError.noDaemon` when nobody listens.
  ///
  /// The blocking socket I/O runs on its own thread, so a caller on the Swift concurrency pool
  /// never starves the tasks that produce the answer (in tests, the server is in-process).
  package func send(_ request: ControlRequest) async throws(ControlSocketError) -> ControlResponse {
    let result = await withCheckedContinuation {
      (continuation: CheckedContinuation<Result<ControlResponse, ControlSocketError>, Never>) in
      do throws(SystemCallError) {
        try SystemThread.detach(name: "bg-control") {
          continuation.resume(
            returning: Result { () throws(ControlSocketError) in try sendBlocking(request) })
        }
      } catch {
        continuation.resume(returning: .failure(.system(error)))
      }
    }
    return try result.get()
  }

  /// Sends `request` on the calling thread. Before anything is sent, the socket's directory
  /// must be private to this user or root, the path must be a socket, and the process serving
  /// it must run as this user or root (`SO_PEERCRED`).
  package func sendBlocking(_ request: ControlRequest) throws(ControlSocketError) -> ControlResponse
  {
    let fd = try connectToTrustedPeer()
    defer { close(fd) }
    var reader = LineReader(path: path)
    return try exchange(request, on: fd, reader: &reader)
  }

  /// Subscribes to the daemon's task changes (`status --watch`). The stream ends when the
  /// daemon stops; cancelling its consumer closes the connection.
  package func watch() throws(ControlSocketError) -> AsyncThrowingStream<TaskChange, any Error> {
    let fd = try connectToTrustedPeer()
    var reader = LineReader(path: path)
    do throws(ControlSocketError) {
      let response = try exchange(.watch, on: fd, reader: &reader)
      guard response.ok else { throw .badMessage(response.message) }
    } catch {
      close(fd)
      throw error
    }
    ControlFraming.setReceiveTimeout(fd, .zero)  // events may be hours apart
    let connection = WatchConnection(fd: fd)
    let (stream, continuation) = AsyncThrowingStream.makeStream(of: TaskChange.self)
    continuation.onTermination = { _ in connection.shutDown() }
    let buffered = reader
    do throws(SystemCallError) {
      try SystemThread.detach(name: "bg-ctl-watch") {
        Self.readChanges(fd, reader: buffered, connection: connection, into: continuation)
      }
    } catch {
      connection.close()
      throw .system(error)
    }
    return stream
  }

  /// Yields each task change read from `fd` until the daemon closes it, then closes it.
  private static func readChanges(
    _ fd: Int32, reader buffered: LineReader, connection: WatchConnection,
    into continuation: AsyncThrowingStream<TaskChange, any Error>.Continuation
  ) {
    var reader = buffered
    do {
      while let line = try reader.next(fd) {
        do {
          continuation.yield(try JSONDecoder().decode(TaskChange.self, from: line))
        } catch {
          throw ControlSocketError.badMessage(String(decoding: line, as: UTF8.self))
        }
      }
      continuation.finish()
    } catch {
      continuation.finish(throwing: connection.isShutDown ? nil : error)
    }
    connection.close()
  }

  /// Connects after checking the directory and the path, then checks the server's user.
  private func connectToTrustedPeer() throws(ControlSocketError) -> Int32 {
    let socketPath = ControlSocketPath(path: path)
    let address = try socketPath.address()
    try socketPath.checkDirectory()
    if !socketPath.isAbstract, try !socketPath.socketExists() { throw .noDaemon(path: path) }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else {
      throw .system(.current("socket", path: path))
    }
    let connected = address.withSocketAddress { connect(fd, $0, $1) }
    if connected != 0 {
      let failure = SystemCallError.current("connect", path: path)
      close(fd)
      if failure.errno == .noSuchFileOrDirectory || failure.errno == .connectionRefused {
        throw .noDaemon(path: path)
      }
      throw .system(failure)
    }
    let peer: PeerCredentials
    do throws(SystemCallError) {
      peer = try PeerCredentials.of(fd)
    } catch {
      close(fd)
      throw .system(SystemCallError("SO_PEERCRED", path: path, errno: error.errno))
    }
    guard peer.isTrusted() else {
      close(fd)
      throw .untrustedPeer(path: path, uid: peer.uid, pid: peer.pid)
    }
    return fd
  }

  private func exchange(
    _ request: ControlRequest, on fd: Int32, reader: inout LineReader
  ) throws(ControlSocketError) -> ControlResponse {
    ControlFraming.setReceiveTimeout(fd, timeout)
    guard var line = try? JSONEncoder().encode(request) else {
      throw .badMessage("cannot encode \(request)")
    }
    line.append(UInt8(ascii: "\n"))
    do {
      try ControlFraming.writeAll(fd, line, path: path)
    } catch .system(let failure) where failure.errno == .brokenPipe {
      // A daemon refusing the connection (too many of ours open) answers and closes at once:
      // its answer is still there to read.
    }
    guard let reply = try reader.next(fd) else {
      throw .badMessage("connection closed before a complete line")
    }
    do {
      return try JSONDecoder().decode(ControlResponse.self, from: reply)
    } catch {
      throw .badMessage(String(decoding: reply, as: UTF8.self))
    }
  }
}

/// The socket of a `watch` subscription: shut down from the consumer's side, closed by the
/// reading thread, never both on a reused descriptor.
private final class WatchConnection: Sendable {
  private let fd: Int32
  private let state = Lock((shutDown: false, closed: false))

  init(fd: Int32) {
    self.fd = fd
  }

  var isShutDown: Bool { state.withLock { $0.shutDown } }

  func shutDown() {
    state.withLock { state in
      guard !state.closed else { return }
      state.shutDown = true
      _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }
  }

  func close() {
    state.withLock { state in
      state.closed = true
      _ = Glibc.close(fd)
    }
  }
}
