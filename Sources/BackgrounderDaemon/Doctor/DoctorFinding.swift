/// One result of `backgrounder doctor`.
public struct DoctorFinding: Sendable, Equatable, CustomStringConvertible {
  /// How bad it is.
  public enum Severity: String, Sendable, Equatable, Comparable {
    /// Checked and fine.
    case ok
    /// Worth knowing; does not fail the check.
    case note
    /// Will stop jobs from running as configured; `doctor` exits non-zero.
    case problem

    public static func < (lhs: Severity, rhs: Severity) -> Bool {
      let order: [Severity] = [.ok, .note, .problem]
      return order.firstIndex(of: lhs)! < order.firstIndex(of: rhs)!
    }
  }

  public var severity: Severity
  /// What was checked (`config`, `job dev.example.a`, `store`, `netlink`, ...).
  public var subject: String
  public var message: String

  public init(_ severity: Severity, _ subject: String, _ message: String) {
    self.severity = severity
    self.subject = subject
    self.message = message
  }

  public var description: String { "\(severity.rawValue): \(subject): \(message)" }
}
