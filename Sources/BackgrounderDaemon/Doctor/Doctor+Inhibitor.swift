import Backgrounder
import Foundation
import Logind

extension Doctor {
  /// Whether systemd-logind gives this user a sleep inhibitor lock (a `delay` lock, taken and
  /// released at once) when a job's runs are to hold one. Neither a missing logind nor a
  /// refusal stops a run, so both are notes.
  func checkInhibitor(_ jobs: [JobDefinition]) -> DoctorFinding? {
    guard jobs.contains(where: { $0.inhibit != InhibitPolicy.none }) else { return nil }
    do {
      for what in SleepInhibitor.inhibited {
        let descriptor = try LogindInhibitCall.inhibit(
          what: what, who: "backgrounder doctor", why: "checking inhibitor locks",
          mode: InhibitPolicy.delay.rawValue, address: nil, timeout: .seconds(2))
        close(descriptor)
      }
      return .init(.ok, "inhibitor", "systemd-logind gives sleep and shutdown inhibitor locks")
    } catch {
      return .init(
        .note, "inhibitor",
        (error.isAbsent
          ? "systemd-logind is not available"
          : "systemd-logind refuses an inhibitor lock to uid \(geteuid())")
          + ": runs cannot hold off sleep or shutdown (\(error))")
    }
  }
}
