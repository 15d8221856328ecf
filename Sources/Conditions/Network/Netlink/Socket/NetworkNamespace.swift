import CSystemShims
import Glibc
import SystemCalls

/// Runs work inside another network namespace without moving the rest of the process.
public enum NetworkNamespace {
  /// Runs `body` on a dedicated thread that first joins the network namespace at `path`
  /// (e.g. `/var/run/netns/NAME`). Sockets created by `body` stay bound to that namespace.
  public static func perform<T: Sendable>(
    inNamespaceAt path: String, _ body: @escaping @Sendable () throws -> T
  ) throws -> T {
    let outcome: Result<T, any Error> = try SystemThread.runAndWait(name: "bg-netns") {
      let descriptor: Int32
      do {
        descriptor = try systemCall("open", path: path) { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
      } catch {
        return .failure(error)
      }
      defer { Glibc.close(descriptor) }
      do {
        _ = try systemCall("setns", path: path) { csystem_setns_net(descriptor) }
      } catch {
        return .failure(error)
      }
      return Result { try body() }
    }
    return try outcome.get()
  }
}
