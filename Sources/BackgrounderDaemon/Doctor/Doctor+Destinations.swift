import Backgrounder
import BackgrounderLinux

extension Doctor {
  /// The `requires-reachable` destination of `job`: a host that does not resolve now is a
  /// problem (the job waits until it does, and a typo never does).
  func checkDestination(
    of job: JobDefinition, resolves: (Destination) -> Bool = DestinationMonitor.resolves
  ) -> [DoctorFinding] {
    guard let text = job.requiresReachable,
      case .success(let destination) = Destination.parse(text)
    else { return [] }
    let subject = "job \(job.id)"
    guard resolves(destination) else {
      return [
        .init(
          .problem, subject,
          "requires-reachable \(text): \(destination.host) does not resolve; the job waits "
            + "until it does (check the name, or the resolver of this network)")
      ]
    }
    return [.init(.ok, subject, "requires-reachable \(text): \(destination.host) resolves")]
  }
}
