extension Doctor {
  /// Whether a job's `bandwidth` / `metered-bandwidth` can be enforced as `run` would
  /// (``RunShaping/detect(mountinfo:hasNetAdmin:creating:)``, nothing created): a note when the
  /// run would go uncapped, a problem when `bandwidth-required` would keep it from starting.
  func checkBandwidth(
    of job: JobDefinition, support: ShapingSupport = RunShaping.detect(creating: false)
  ) -> [DoctorFinding] {
    guard let cap = job.bandwidth else { return [] }
    let subject = "job \(job.id)"
    let rates = [
      cap.rate.map { BandwidthCap.format($0) },
      cap.meteredRate.map { "\(BandwidthCap.format($0)) on metered links" },
    ].compactMap { $0 }.joined(separator: ", ")
    guard let reason = support.unavailableReason else {
      return [
        .init(
          .ok, subject,
          "egress capped at \(rates) (HTB class on the primary link, net_prio cgroup); "
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
