import CSystemdBus
import Foundation
import SystemCalls

#if canImport(Glibc)
  import Glibc
#endif

/// Checks a config and the machine it runs on — everything `backgrounder run` would fail on:
/// commands that cannot run (resolved as the daemon does, relative to `working-directory`),
/// environment names that cannot be passed, a control socket path that is too long or in an
/// unsafe directory, a store that is not ours or cannot be written, a metrics directory that
/// cannot be written, netlink or power_supply that cannot be read; also overrides that match no
/// interface and systemd units that are installed wrong.
package struct Doctor: Sendable {
  package var configPath: String
  /// Root of sysfs (`/sys`), for interface names and power supplies.
  package var sysfsRoot: String
  /// `PATH` used to resolve commands given by name.
  package var searchPath: String
  /// Unit files to inspect if present (system and user locations).
  package var unitPaths: [String]
  /// The machine id file `fixed-random-delay` reads.
  package var machineIdPath = MachineIdentity.defaultPath
  /// The time calendar jobs' next elapses are counted from (nil: now).
  package var now: Date?
  /// The cgroup root runs would use, checked as `run` checks it (default:
  /// `$BACKGROUNDER_CGROUP`; nil: not checked).
  package var cgroupRoot: String? = ProcessInfo.processInfo.environment["BACKGROUNDER_CGROUP"]

  package init(
    configPath: String, sysfsRoot: String = "/sys",
    searchPath: String = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
    unitPaths: [String]
  ) {
    self.configPath = configPath
    self.sysfsRoot = sysfsRoot
    self.searchPath = searchPath
    self.unitPaths = unitPaths
  }

  /// Runs every check; findings are in check order.
  package func run() -> [DoctorFinding] {
    var findings: [DoctorFinding] = []
    let configuration: DaemonConfiguration
    do {
      var loaded = try ConfigurationLoader.load(path: configPath)
      loaded.telemetry = try loaded.telemetry?.loadingHeadersFile(configFile: loaded.sourcePath)
      configuration = loaded
      findings.append(
        .init(.ok, "config", "\(configPath): \(configuration.jobs.count) job(s)"))
    } catch {
      // One finding per problem: each is counted in doctor's total.
      findings += error.problems.map { .init(.problem, "config", $0.description) }
      if error.omitted > 0 {
        findings.append(
          .init(.problem, "config", "\(error.omitted) more problem(s) in \(configPath) not shown"))
      }
      findings += environmentChecks()
      return findings
    }
    if let exposed = ConfigSecrets.problem(path: configPath, configuration: configuration) {
      findings.append(.init(.problem, "config", exposed))
    }
    for job in configuration.jobs { findings += check(job: job) }
    findings += checkOverrides(configuration)
    if let inhibitor = checkInhibitor(configuration.jobs) { findings.append(inhibitor) }
    if let idle = checkUserIdle(configuration.jobs) { findings.append(idle) }
    if let accounting = checkByteAccounting(configuration) { findings.append(accounting) }
    if configuration.desktopNotices { findings.append(checkDesktopNotices()) }
    findings += checkWakeAlarms(configuration.jobs)
    findings.append(checkStore(configuration.storePath))
    findings.append(checkSocket(configuration.controlSocketPath))
    if let metricsFile = configuration.metricsFile { findings.append(checkMetrics(metricsFile)) }
    findings += environmentChecks()
    return findings
  }

  func check(job: JobDefinition) -> [DoctorFinding] {
    let subject = "job \(job.id)"
    var findings: [DoctorFinding] = []
    let program = job.command[0]
    if let resolved = resolve(program, in: job.workingDirectory) {
      findings.append(.init(.ok, subject, "runs \(resolved)"))
    } else {
      findings.append(
        .init(
          .problem, subject,
          program.contains("/")
            ? "command \(program) does not exist or is not executable"
            : "command \(program) not found in PATH (\(searchPath))"))
    }
    if let directory = job.workingDirectory, !isDirectory(directory) {
      findings.append(.init(.problem, subject, "working-directory \(directory) does not exist"))
    }
    findings += checkEnvironment(of: job)
    findings += checkCalendar(of: job)
    findings += checkPriority(of: job)
    findings += checkBandwidth(of: job)
    findings += checkMount(of: job)
    findings += checkDestination(of: job)
    return findings
  }

  func checkOverrides(_ configuration: DaemonConfiguration) -> [DoctorFinding] {
    let interfaces =
      (try? FileManager.default.contentsOfDirectory(atPath: "\(sysfsRoot)/class/net")) ?? []
    var findings: [DoctorFinding] = []
    let overrides =
      configuration.meteredInterfaces.map { ("metered", $0) }
      + configuration.unmeteredInterfaces.map { ("unmetered", $0) }
    for (kind, glob) in overrides {
      let matches = interfaces.filter { fnmatch(glob, $0, 0) == 0 }.sorted()
      if matches.isEmpty {
        let known = interfaces.sorted().joined(separator: ", ")
        findings.append(
          .init(
            .problem, "network.\(kind)",
            "\"\(glob)\" matches no interface (present: \(known.isEmpty ? "none" : known))"))
      } else {
        findings.append(
          .init(.ok, "network.\(kind)", "\"\(glob)\" matches \(matches.joined(separator: ", "))"))
      }
    }
    return findings
  }

  /// The store's directory passes the whole-path rule (or would be created under trusted
  /// directories only), and the store, if it exists, is a regular file of ours (a symlink is
  /// refused), readable and writable. A relative path is taken from the working directory,
  /// as `run` takes it.
  func checkStore(_ path: String) -> DoctorFinding {
    let directory = PrivateDirectory.parent(of: path)
    do {
      if case .missing(let missing) = try TrustedDirectory.inspect(directory) {
        return .init(.ok, "store", "\(path) will be created (from \(missing))")
      }
    } catch {
      return .init(.problem, "store", "\(path): \(error)")
    }
    var info = stat()
    guard lstat(path, &info) == 0 else {
      return access(directory, W_OK | X_OK) == 0
        ? .init(.ok, "store", "\(path) will be created (in \(directory))")
        : .init(.problem, "store", "cannot create \(path): \(directory) is not writable")
    }
    guard info.st_mode & S_IFMT == S_IFREG else {
      return .init(
        .problem, "store",
        "\(path) is \(fileKind(mode: info.st_mode)), not a regular file "
          + "(mode \(PrivateDirectoryError.octal(info.st_mode))); a symlink is refused")
    }
    if info.st_uid != geteuid() {
      return .init(
        .problem, "store", "\(path) is owned by uid \(info.st_uid), not by \(geteuid())")
    }
    return access(path, R_OK | W_OK) == 0
      ? .init(.ok, "store", "\(path) is ours, readable and writable")
      : .init(.problem, "store", "\(path) is not readable and writable by uid \(geteuid())")
  }

  func environmentChecks() -> [DoctorFinding] {
    var findings: [DoctorFinding] = []
    let netlinkRoute: Int32 = 0  // NETLINK_ROUTE, from <linux/netlink.h>
    let fd = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue), netlinkRoute)
    if fd >= 0 {
      close(fd)
      findings.append(.init(.ok, "netlink", "rtnetlink socket opens"))
    } else {
      findings.append(
        .init(
          .problem, "netlink",
          "cannot open an rtnetlink socket: \(SystemCallError.current("socket").errno)"))
    }
    if let reason = csd_library_error() {
      findings.append(
        .init(
          .problem, "libsystemd",
          "cannot be opened (\(String(cString: reason))): NetworkManager, ModemManager, logind "
            + "and the journal are not used"))
    }
    let supplies = "\(sysfsRoot)/class/power_supply"
    if let entries = try? FileManager.default.contentsOfDirectory(atPath: supplies) {
      findings.append(
        entries.isEmpty
          ? .init(.note, "power", "no power supplies in \(supplies): treated as on external power")
          : .init(.ok, "power", "\(entries.count) supply(ies) in \(supplies)"))
    } else if FileManager.default.fileExists(atPath: supplies) {
      findings.append(.init(.problem, "power", "\(supplies) is not readable"))
    } else {
      findings.append(.init(.note, "power", "\(supplies) missing: treated as on external power"))
    }
    findings += unitPaths.compactMap(checkUnit)
    if let cgroupRoot { findings.append(checkCgroup(cgroupRoot)) }
    return findings
  }

  func checkUnit(_ path: String) -> DoctorFinding? {
    guard let bytes = try? ConfigFileReader.contents(of: path) else { return nil }
    let text = String(decoding: bytes, as: UTF8.self)
    let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    guard lines.contains("Type=notify") else {
      return .init(.problem, "unit \(path)", "needs Type=notify (regenerate: backgrounder unit)")
    }
    guard let exec = lines.first(where: { $0.hasPrefix("ExecStart=") }) else {
      return .init(.problem, "unit \(path)", "has no ExecStart=")
    }
    let binary =
      exec.dropFirst("ExecStart=".count).split(separator: " ").first.map(String.init) ?? ""
    guard access(binary, X_OK) == 0 else {
      return .init(.problem, "unit \(path)", "ExecStart binary \(binary) is not executable")
    }
    guard exec.contains(" run") else {
      return .init(.problem, "unit \(path)", "ExecStart does not start `backgrounder run`")
    }
    return .init(.ok, "unit \(path)", "installed, runs \(binary)")
  }

  /// The file `program` runs: a path with a slash is taken relative to `workingDirectory` (the
  /// directory the command is started in), a bare name is searched in `PATH`.
  private func resolve(_ program: String, in workingDirectory: String?) -> String? {
    if program.contains("/") {
      let path =
        program.hasPrefix("/") || workingDirectory == nil
        ? program : "\(workingDirectory!)/\(program)"
      return access(path, X_OK) == 0 && !isDirectory(path) ? path : nil
    }
    for directory in searchPath.split(separator: ":") {
      let candidate = "\(directory)/\(program)"
      if access(candidate, X_OK) == 0, !isDirectory(candidate) { return candidate }
    }
    return nil
  }

  func isDirectory(_ path: String) -> Bool {
    var flag: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &flag) && flag.boolValue
  }
}
