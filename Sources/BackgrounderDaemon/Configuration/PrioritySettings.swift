/// How much of the machine a job's run may take: its `nice` value and I/O scheduling class
/// (set on the process before it executes the job), and the `cpu.weight`, `io.weight` and
/// `memory.max` of its run cgroup (where the daemon has a delegated one). The defaults make
/// every run background work: nice 10, the idle I/O class, weights 20 (of the default 100),
/// no memory limit — what systemd's `Nice=`, `IOSchedulingClass=`, `CPUWeight=`, `IOWeight=`
/// and `MemoryMax=` set for a unit.
package struct RunPriority: Sendable, Equatable, Codable {
  /// `io-class`: the I/O scheduling class of the run's processes.
  package enum IOClass: String, Sendable, Equatable, Codable, CaseIterable {
    /// Disk time only when no other process wants it (`IOPRIO_CLASS_IDLE`).
    case idle
    /// The normal class, at its middle level (`IOPRIO_CLASS_BE`, level 4).
    case bestEffort = "best-effort"
  }

  /// `nice` (-20…19): below 0 needs `CAP_SYS_NICE`.
  package var nice = 10
  package var ioClass = IOClass.idle
  /// `cpu-weight` (1–10000) of the run's cgroup.
  package var cpuWeight = 20
  /// `io-weight` (1–10000) of the run's cgroup.
  package var ioWeight = 20
  /// `memory-max` in bytes (`memory.max` of the run's cgroup); nil: no limit.
  package var memoryMax: UInt64?

  /// The background defaults.
  package init() {}

  /// The settings every run gets when its job sets none.
  package static let background = RunPriority()
}

/// Reads and checks a `[[job]]` table's priority keys: `nice`, `io-class`, `cpu-weight`,
/// `io-weight` and `memory-max`.
enum PrioritySettingsReader {
  static let keys = ["nice", "io-class", "cpu-weight", "io-weight", "memory-max"]

  /// The priority of `job`, or nil when it sets none of the keys (the background defaults).
  static func read(_ job: TableReader) throws(ConfigurationError) -> RunPriority? {
    guard keys.contains(where: job.contains) else { return nil }
    var priority = RunPriority()
    priority.nice = try job.int("nice", in: -20...19) ?? priority.nice
    if let text = try job.string("io-class") {
      guard let value = RunPriority.IOClass(rawValue: text) else {
        throw job.error("io-class", "expected \"idle\" or \"best-effort\", got \"\(text)\"")
      }
      priority.ioClass = value
    }
    priority.cpuWeight = try job.int("cpu-weight", in: 1...10000) ?? priority.cpuWeight
    priority.ioWeight = try job.int("io-weight", in: 1...10000) ?? priority.ioWeight
    if let text = try job.string("memory-max") {
      guard let bytes = memorySize(text) else {
        throw job.error(
          "memory-max",
          "expected a size such as \"512M\" or \"2G\" (bytes, or K, M, G, T: powers of 1024), "
            + "got \"\(text)\"")
      }
      priority.memoryMax = bytes
    }
    return priority
  }

  /// `"2G"` → 2 GiB: a positive whole number with an optional `K`, `M`, `G` or `T` suffix
  /// (powers of 1024, as systemd's `MemoryMax=`); nil when malformed, zero or too large.
  static func memorySize(_ text: String) -> UInt64? {
    let suffixes: [Character: UInt64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
    var digits = Substring(text)
    var unit: UInt64 = 1
    if let last = text.last, let multiplier = suffixes[Character(last.uppercased())] {
      digits = digits.dropLast()
      unit = multiplier
    }
    guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
      let number = UInt64(digits), number > 0
    else { return nil }
    let (bytes, overflow) = number.multipliedReportingOverflow(by: unit)
    return overflow ? nil : bytes
  }
}
