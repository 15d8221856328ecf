import Foundation
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// Sends one `ControlRequest` to the daemon's control socket and waits for its response.
public struct ControlClient: Sendable {
  /// The socket path.
  public var path: String
  /// How long to wait for the daemon's answer.
  public var timeout: Duration

  public init(path: String, timeout: Duration = .seconds(10)) {
    self.path = path
    self.timeout = timeout
  }

  /// Sends `request`; throws `ControlSocketError.noDaemon` when nobody listens.
  ///
  /// The blocking socket I/O runs on its own thread, so a caller on the Swift concurrency pool
  /// never starves the tasks that produce the answer (in tests, the server is in-process).
  public func send(_ request: ControlRequest) async throws(ControlSocketError) -> ControlResponse {
    let result = await withCheckedContinuation {
      (continuation: CheckedContinuation<Result<ControlResponse, ControlSocketError>, Never>) in
      Thread {
        continuation.resume(
          returning: Result { () throws(ControlSocketError) in try sendBlocking(request) })
      }.start()
    }
    return try result.get()
  }

  /// Sends `request` on the calling thread.
  func sendBlocking(_ request: ControlRequest) throws(ControlSocketError) -> ControlResponse {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else {
      throw .system(operation: "socket", path: path, errno: Errno(rawValue: errno))
    }
    defer { close(fd) }
    let address: UnixSocketAddress
    do {
      address = try UnixSocketAddress(path: path)
    } catch {
      throw .system(operation: "address", path: path, errno: error)
    }
    let connected = address.withSocketAddress { connect(fd, $0, $1) }
    if connected != 0 {
      let failure = errno
      if failure == ENOENT || failure == ECONNREFUSED { throw .noDaemon(path: path) }
      throw .system(operation: "connect", path: path, errno: Errno(rawValue: failure))
    }
    ControlFraming.setReceiveTimeout(fd, timeout)
    guard var line = try? JSONEncoder().encode(request) else {
      throw .badMessage("cannot encode \(request)")
    }
    line.append(UInt8(ascii: "\n"))
    try ControlFraming.writeAll(fd, line, path: path)
    let reply = try ControlFraming.readLine(fd, path: path)
    do {
      return try JSONDecoder().decode(ControlResponse.self, from: reply)
    } catch {
      throw .badMessage(String(decoding: reply, as: UTF8.self))
    }
  }
}
