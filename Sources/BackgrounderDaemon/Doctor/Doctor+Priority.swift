import Foundation

extension Doctor {
  /// `CAP_SYS_NICE` from `<linux/capability.h>`.
  static let capabilitySysNice = 23

  /// What of a job's priority cannot be had: a negative `nice` without `CAP_SYS_NICE` (the run
  /// then stays at the daemon's nice value), and `memory-max` or weights without a delegated
  /// cgroup (then not enforced at all).
  func checkPriority(of job: JobDefinition) -> [DoctorFinding] {
    guard let priority = job.priority else { return [] }
    let subject = "job \(job.id)"
    var findings: [DoctorFinding] = []
    if priority.nice < 0 && !Self.hasCapability(Self.capabilitySysNice) {
      findings.append(
        .init(
          .problem, subject,
          "nice = \(priority.nice) raises the priority, which needs CAP_SYS_NICE or root "
            + "(uid \(geteuid()) has neither); runs would stay at the daemon's nice value"))
    }
    let defaults = RunPriority.background
    let cgroupKeys =
      [
        priority.memoryMax != nil ? "memory-max" : nil,
        priority.cpuWeight != defaults.cpuWeight ? "cpu-weight" : nil,
        priority.ioWeight != defaults.ioWeight ? "io-weight" : nil,
      ].compactMap { $0 }
    guard !cgroupKeys.isEmpty else { return findings }
    let keys = cgroupKeys.joined(separator: ", ")
    guard let cgroupRoot else {
      findings.append(
        .init(
          .note, subject,
          "\(keys) can be enforced only in a delegated cgroup (the systemd unit's Delegate=yes, "
            + "or BACKGROUNDER_CGROUP); without one they cannot be enforced"))
      return findings
    }
    let available =
      (try? String(contentsOfFile: cgroupRoot + "/cgroup.controllers", encoding: .utf8))?
      .split(whereSeparator: \.isWhitespace).map(String.init) ?? []
    let needed = [
      "memory-max": "memory", "cpu-weight": "cpu", "io-weight": "io",
    ]
    let missing = cgroupKeys.filter { !available.contains(needed[$0]!) }
    if !missing.isEmpty {
      findings.append(
        .init(
          .problem, subject,
          "\(missing.joined(separator: ", ")) cannot be enforced: the cgroup \(cgroupRoot) "
            + "has no \(missing.map { needed[$0]! }.joined(separator: "/")) controller"))
    }
    return findings
  }

  /// Whether this process has capability `number` in its effective set (`CapEff` of
  /// `/proc/self/status`).
  static func hasCapability(_ number: Int) -> Bool {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
      let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
      let mask = UInt64(
        line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces),
        radix: 16)
    else { return false }
    return mask & (1 << UInt64(number)) != 0
  }
}
