import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The checks of what `backgrounder run` needs besides the config: its control socket, metrics
/// file and job environments.
extension Doctor {
  /// The longest socket path `bind` accepts (`sun_path` is 108 bytes with the final NUL).
  static let maximumSocketPathBytes = 107

  /// The socket path fits in `sun_path`; it is a socket if it exists; its directory passes the
  /// whole-path rule (or would be created under trusted directories only).
  func checkSocket(_ path: String) -> DoctorFinding {
    let subject = "control socket"
    let length = path.utf8.count
    if length > Self.maximumSocketPathBytes {
      return .init(
        .problem, subject,
        "\(path) is \(length) bytes long; a Unix socket path can have at most "
          + "\(Self.maximumSocketPathBytes) (choose a shorter [control] socket)")
    }
    guard !path.hasPrefix("@") else {
      return .init(.problem, subject, "\(path) is an abstract name: any user could bind it first")
    }
    var info = stat()
    if lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFSOCK {
      return .init(.problem, subject, "\(path) exists and is not a socket")
    }
    let directory = PrivateDirectory.parent(of: path)
    do {
      if case .missing(let missing) = try TrustedDirectory.inspect(directory) {
        return .init(.ok, subject, "\(path) can be bound (\(missing) will be created)")
      }
    } catch {
      return .init(.problem, subject, "\(error)")
    }
    guard access(directory, W_OK | X_OK) == 0 else {
      return .init(.problem, subject, "\(directory) is not writable by uid \(geteuid())")
    }
    return .init(.ok, subject, "\(path) can be bound (\(length) bytes)")
  }

  /// The metrics file's directory exists, passes the whole-path rule and is writable (the file
  /// is replaced by rename).
  func checkMetrics(_ path: String) -> DoctorFinding {
    let directory = PrivateDirectory.parent(of: path)
    do {
      _ = try TrustedDirectory.open(directory, creating: false)
    } catch {
      return .init(.problem, "metrics", "cannot write \(path): \(error)")
    }
    return access(directory, W_OK | X_OK) == 0
      ? .init(.ok, "metrics", "\(path) can be written")
      : .init(.problem, "metrics", "cannot write \(path): \(directory) is not writable")
  }

  /// The cgroup root is a cgroup2 directory of ours reached through trusted directories only;
  /// otherwise `run` warns and contains runs by session instead.
  func checkCgroup(_ root: String) -> DoctorFinding {
    do {
      _ = try RunCgroups.verify(root)
      return .init(.ok, "cgroup", "\(root): runs get their own cgroups under it")
    } catch {
      return .init(
        .problem, "cgroup", "\(error); runs would be contained by session only (setsid escapes)")
    }
  }

  /// Every `environment` name is a valid variable name and no value holds a NUL byte.
  func checkEnvironment(of job: JobDefinition) -> [DoctorFinding] {
    checkEnvironmentNames(of: job) + checkEnvironmentFile(of: job)
  }

  /// The job's `environment-file` is read and checked as a run reads it; one under
  /// `${CREDENTIALS_DIRECTORY}` only when `doctor` runs with that variable (inside the unit).
  func checkEnvironmentFile(of job: JobDefinition) -> [DoctorFinding] {
    guard let file = job.environmentFile else { return [] }
    let environment = ProcessInfo.processInfo.environment
    if file.hasPrefix(EnvironmentFile.credentialsPrefix),
      environment["CREDENTIALS_DIRECTORY"] == nil
    {
      return [
        .init(
          .note, "job \(job.id)",
          "environment-file \(file) is a systemd credential of the daemon's unit: not checked "
            + "outside it")
      ]
    }
    do {
      let variables = try EnvironmentFile.read(file, environment: environment)
      return [
        .init(.ok, "job \(job.id)", "environment-file \(file): \(variables.count) variable(s)")
      ]
    } catch {
      return [.init(.problem, "job \(job.id)", error.description)]
    }
  }

  private func checkEnvironmentNames(of job: JobDefinition) -> [DoctorFinding] {
    job.environment.keys.sorted().compactMap { name -> DoctorFinding? in
      if !Self.isValidVariableName(name) {
        return .init(
          .problem, "job \(job.id)",
          "environment name \"\(name)\" is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)")
      }
      if job.environment[name]?.utf8.contains(0) == true {
        return .init(.problem, "job \(job.id)", "environment \(name) contains a NUL byte")
      }
      return nil
    }
  }

  static func isValidVariableName(_ name: String) -> Bool {
    guard let first = name.unicodeScalars.first, first == "_" || first.isASCIILetter else {
      return false
    }
    return name.unicodeScalars.allSatisfy {
      $0 == "_" || $0.isASCIILetter || ("0"..."9").contains($0)
    }
  }
}

extension Unicode.Scalar {
  fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}
