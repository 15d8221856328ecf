import Foundation

/// Finds the program a job names, as `execvp` would, but in the job's own `PATH`, so that a
/// missing program is reported as "could not start" rather than as an exit status.
enum ExecutableLookup {
  /// `PATH` used when the job's environment has none (glibc's `confstr(_CS_PATH)` plus
  /// `/usr/local/bin`).
  static let defaultPath = "/usr/local/bin:/usr/bin:/bin"

  /// `program` itself when it contains a `/` and names an executable file (relative to
  /// `workingDirectory`), else the first executable regular file named `program` in `path`;
  /// nil when there is none.
  static func resolve(_ program: String, path: String?, workingDirectory: String?) -> String? {
    if program.contains("/") {
      let located =
        program.hasPrefix("/") ? program : workingDirectory.map { $0 + "/" + program } ?? program
      return isExecutableFile(located) ? program : nil
    }
    guard !program.isEmpty else { return nil }
    for directory in (path ?? defaultPath).split(separator: ":") where directory.hasPrefix("/") {
      let candidate = directory + "/" + program
      if isExecutableFile(candidate) { return candidate }
    }
    return nil
  }

  private static func isExecutableFile(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && access(path, X_OK) == 0
  }
}
