import SystemCalls
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// A job's `environment-file`: `NAME=value` lines kept out of the config (and out of the store,
/// which records only the path), read at each run.
///
/// The file is trusted like the store path: its directory passes the whole-path rule (owned by
/// root or the daemon's user, no ancestor writable by others), and the file itself is a regular
/// file (never a symlink, FIFO or device) owned by root or the daemon's user, not writable by
/// group or others and not readable by others. A path starting with `${CREDENTIALS_DIRECTORY}/`
/// names a systemd credential of the daemon's unit (`LoadCredential=backup.env:/etc/…`): the
/// daemon's `$CREDENTIALS_DIRECTORY`, which jobs themselves never get.
///
/// Format: one `NAME=value` per line; blank lines and lines starting with `#` or `;` are
/// skipped; the value runs to the end of the line, whitespace around it trimmed, one pair of
/// surrounding `"` or `'` removed (nothing else is unescaped or expanded). Errors name the
/// file and the line number, never a value.
enum EnvironmentFile {
  /// The prefix of a path in the daemon's systemd credentials directory.
  static let credentialsPrefix = "${CREDENTIALS_DIRECTORY}/"
  /// The largest file read.
  static let maximumBytes = 64 * 1024

  /// Why the file was not used, naming it.
  struct Failure: Error, Equatable, CustomStringConvertible {
    let description: String
  }

  /// Why `path` cannot be an `environment-file` (what the config reader refuses), or nil.
  static func problem(withPath path: String) -> String? {
    if path.utf8.contains(0) { return "contains a NUL byte" }
    let rest =
      path.hasPrefix(credentialsPrefix) ? String(path.dropFirst(credentialsPrefix.count)) : path
    guard path.hasPrefix("/") || path.hasPrefix(credentialsPrefix) else {
      return "must be an absolute path or start with \(credentialsPrefix) (got \"\(path)\")"
    }
    if rest.contains("${") {
      return "only a leading ${CREDENTIALS_DIRECTORY} is expanded (got \"\(path)\")"
    }
    if rest.isEmpty || rest.hasSuffix("/") { return "names a directory, not a file (\"\(path)\")" }
    return nil
  }

  /// The file `path` names, with the credentials directory taken from `environment` (the
  /// daemon's).
  static func resolve(_ path: String, environment: [String: String]) throws(Failure) -> String {
    guard path.hasPrefix(credentialsPrefix) else { return path }
    guard let directory = environment["CREDENTIALS_DIRECTORY"], directory.hasPrefix("/") else {
      throw Failure(
        description: "environment-file \(path): $CREDENTIALS_DIRECTORY is not set (the daemon "
          + "does not run under a systemd unit with LoadCredential=)")
    }
    return directory + "/" + path.dropFirst(credentialsPrefix.count)
  }

  /// The variables of the file `path` names (see ``resolve(_:environment:)``), checked and
  /// parsed as described above.
  static func read(_ path: String, environment: [String: String]) throws(Failure) -> [String:
    String]
  {
    let file = try resolve(path, environment: environment)
    let bytes: [UInt8]
    var readable: mode_t?
    checked: do throws(PrivateDirectoryError) {
      let (directory, name) = try TrustedDirectory.open(
        containing: file, creating: false, owners: .ownUserOrRoot)
      guard let status = try directory.status(of: name) else {
        throw .system(SystemCallError("open", path: file, errno: .noSuchFileOrDirectory))
      }
      guard status.isRegularFile else {
        throw .notARegularFile(path: file, owner: status.owner, mode: status.permissions)
      }
      guard status.owner == 0 || status.owner == geteuid() else {
        throw .untrustedOwner(
          path: file, owner: status.owner, mode: status.permissions, expected: .ownUserOrRoot)
      }
      guard !status.isWritableByOthers else {
        throw .writableByOthers(path: file, owner: status.owner, mode: status.permissions)
      }
      // Not readable by others: checked below, outside this block's error type.
      guard status.permissions & 0o004 == 0 else {
        bytes = []
        readable = status.permissions
        break checked
      }
      bytes = try BoundedFile.read(name, in: directory, limit: maximumBytes)
    } catch {
      throw Failure(description: "environment-file: \(error)")
    }
    if let readable {
      throw Failure(
        description: "environment-file: refusing to use \(file): it is readable by other users "
          + "(mode \(PrivateDirectoryError.octal(readable))); run `chmod 0600 \(file)`")
    }
    return try parse(bytes, file: file)
  }

  /// The variables of a file's `bytes` (`file` names it in errors).
  static func parse(_ bytes: [UInt8], file: String) throws(Failure) -> [String: String] {
    guard !bytes.contains(0) else {
      throw Failure(description: "environment-file \(file): contains a NUL byte")
    }
    var variables: [String: String] = [:]
    let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    for (index, raw) in lines.enumerated() {
      let line = Substring(String(decoding: raw, as: UTF8.self)).trimmingWhitespace()
      if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
      guard let equals = line.firstIndex(of: "=") else {
        throw Failure(
          description: "environment-file \(file), line \(index + 1): expected NAME=value")
      }
      let name = String(line[..<equals].trimmingWhitespace())
      guard Doctor.isValidVariableName(name) else {
        throw Failure(
          description: "environment-file \(file), line \(index + 1): \"\(name)\" is not a valid "
            + "variable name ([A-Za-z_][A-Za-z0-9_]*)")
      }
      var value = line[line.index(after: equals)...].trimmingWhitespace()
      if value.count >= 2, let first = value.first, first == "\"" || first == "'",
        value.last == first
      {
        value = value.dropFirst().dropLast()
      }
      variables[name] = String(value)
    }
    return variables
  }
}

extension Substring {
  /// Without the spaces, tabs and carriage returns at either end.
  fileprivate func trimmingWhitespace() -> Substring {
    let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
    guard let start = firstIndex(where: { !blank($0) }) else { return self[endIndex...] }
    let end = lastIndex(where: { !blank($0) })!
    return self[start...end]
  }
}
