import Backgrounder
import BackgrounderLinux
import DBus
import Foundation
import Logind

/// Why logind's idle hint could not be read.
struct IdleHintRefusal: BusCallRefusal, CustomStringConvertible {
  /// logind is not on the bus (or there is no bus).
  var isAbsent: Bool
  var description: String
}

extension Doctor {
  /// Whether systemd-logind answers its `IdleHint` when a job has `requires-idle`: without it
  /// the user's idle state is not known and those jobs never run (unknown is not permission).
  func checkUserIdle(_ jobs: [JobDefinition]) -> DoctorFinding? {
    let waiting = jobs.filter { $0.requiresIdle != nil }.map(\.id)
    guard !waiting.isEmpty else { return nil }
    do throws(IdleHintRefusal) {
      let idle = try BusMethodCall.call(
        on: .system(address: nil), destination: LogindBus.destination,
        path: LogindBus.path, interface: "org.freedesktop.DBus.Properties", method: "Get",
        timeout: .seconds(2),
        arguments: [.string(LogindBus.interface), .string("IdleHint")],
        read: { reply throws(IdleHintRefusal) -> Bool in
          guard case .bool(let value)? = try? reply.variant() else {
            throw IdleHintRefusal(isAbsent: false, description: "IdleHint is not a boolean")
          }
          return value
        })
      return .init(
        .ok, "user idle",
        "systemd-logind tells whether the user is idle (now: \(idle ? "idle" : "active"))")
    } catch {
      return .init(
        .problem, "user idle",
        (error.isAbsent
          ? "systemd-logind is not available" : "systemd-logind's idle hint cannot be read")
          + ": the user's idle state is not known, so \(waiting.joined(separator: ", ")) "
          + "(requires-idle) never run (\(error))")
    }
  }
}
