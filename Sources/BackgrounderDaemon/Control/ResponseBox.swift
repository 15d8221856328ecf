import Locking

/// Hands a response from the handler's task to the waiting control thread.
final class ResponseBox: Sendable {
  private let value = Lock(ControlResponse(ok: false, message: "no response"))

  func set(_ response: ControlResponse) { value.withLock { $0 = response } }

  func get() -> ControlResponse { value.withLock { $0 } }
}
