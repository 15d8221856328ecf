import Backgrounder

extension Doctor {
  /// Whether a job's `bandwidth` / `metered-bandwidth` can be enforced as `run` would
  /// (``RunShaping/detect(mountinfo:hasNetAdmin:creating:runCgroups:loadsPrograms:)``, nothing
  /// created; `support` nil: detected here, with run cgroups when the daemon would have a cgroup
  /// root): a note when the run would go uncapped, a problem when `bandwidth-required` would
  /// keep it from starting.
  func checkBandwidth(of job: JobDefinition, support: ShapingSupport? = nil) -> [DoctorFinding] {
    guard let cap = job.bandwidth else { return [] }
    let support = support ?? RunShaping.detect(creating: false, runCgroups: cgroupRoot != nil)
    let subject = "job \(job.id)"
    let rates = [
      cap.rate.map { BandwidthCap.format($0) },
      cap.meteredRate.map { "\(BandwidthCap.format($0)) on metered links" },
    ].compactMap { $0 }.joined(separator: ", ")
    guard let reason = support.unavailableReason else {
      let classifier =
        support == .cgroupPriority ? "a BPF classifier on the run's cgroup" : "net_prio cgroup"
      return [
        .init(
          .ok, subject,
          "egress capped at \(rates) (HTB class on the primary link, \(classifier)); "
            + "ingress is not shaped")
      ]
    }
    return [
      .init(
        cap.required ? .problem : .note, subject,
        "the bandwidth cap (\(rates)) cannot be enforced: \(reason); "
          + (cap.required
            ? "with bandwidth-required = true its runs do not start"
            : "its runs go uncapped"))
    ]
  }
}
