import CNetlink
import Glibc

/// Runs work inside another network namespace without moving the rest of the process.
public enum NetworkNamespace {
  /// Runs `body` on a dedicated thread that first joins the network namespace at `path`
  /// (e.g. `/var/run/netns/NAME`). Sockets created by `body` stay bound to that namespace.
  public static func perform<T: Sendable>(
    inNamespaceAt path: String, _ body: @escaping @Sendable () throws -> T
  ) throws -> T {
    let outcome: Result<T, any Error> = try DedicatedThread.runAndWait {
      let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
      guard descriptor >= 0 else {
        return .failure(NetlinkSystemError(operation: "open \(path)", errno: Glibc.errno))
      }
      defer { Glibc.close(descriptor) }
      guard cnl_setns_net(descriptor) == 0 else {
        return .failure(NetlinkSystemError(operation: "setns \(path)", errno: Glibc.errno))
      }
      return Result { try body() }
    }
    return try outcome.get()
  }
}
