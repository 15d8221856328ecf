import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// Runs `body`, a system call returning -1 with `errno` on failure, until it is not interrupted
/// (`EINTR`); throws any other failure as a ``SystemCallError`` naming `operation` (and `path`,
/// when the call was about one). The one
/// place that retries `EINTR` (swift-nio's `syscall(blocking:)`, swift-system's
/// `valueOrErrno(retryOnInterrupt:)`).
@inlinable
public func systemCall<Result: FixedWidthInteger>(
  _ operation: @autoclosure () -> String, path: @autoclosure () -> String? = nil,
  _ body: () -> Result
) throws(SystemCallError) -> Result {
  while true {
    let result = body()
    if result != -1 { return result }
    let failure = Glibc.errno
    if failure == EINTR { continue }
    throw SystemCallError(operation(), path: path(), errno: Errno(rawValue: failure))
  }
}

/// ``systemCall(_:path:_:)`` on a non-blocking descriptor: nil when the call would block
/// (`EAGAIN`/`EWOULDBLOCK`).
@inlinable
public func nonBlockingSystemCall<Result: FixedWidthInteger>(
  _ operation: @autoclosure () -> String, path: @autoclosure () -> String? = nil,
  _ body: () -> Result
) throws(SystemCallError) -> Result? {
  do {
    return try systemCall(operation(), path: path(), body)
  } catch {
    if error.errno == .wouldBlock || error.errno == .resourceTemporarilyUnavailable { return nil }
    throw error
  }
}
