/// One result of `backgrounder doctor`.
package struct DoctorFinding: Sendable, Equatable, CustomStringConvertible {
  /// How bad it is.
  package enum Severity: String, Sendable, Equatable, Comparable {
    /// Checked and fine.
    case ok
    /// Worth knowing; does not fail the check.
    case note
    /// Will stop jobs from running as configured; `doctor` exits non-zero.
    case problem

    package static func < (lhs: Severity, rhs: Severity) -> Bool {
      let order: [Severity] = [.ok, .note, .problem]
      return order.firstIndex(of: lhs)! < order.firstIndex(of: rhs)!
    }
  }

  package var severity: Severity
  /// What was checked (`config`, `job dev.example.a`, `store`, `netlink`, ...).
  package var subject: String
  package var message: String

  package init(_ severity: Severity, _ subject: String, _ message: String) {
    self.severity = severity
    self.subject = subject
    self.message = message
  }

  package var description: String { "\(severity.rawValue): \(subject): \(message)" }
}
