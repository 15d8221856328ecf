import Backgrounder
import Foundation
import SystemCalls
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// `[telemetry]`: each finished run exported as an OpenTelemetry span over OTLP/HTTP to a
/// collector, by the separate `backgrounder-otlp-export` program (the `Telemetry/` package).
package struct TelemetrySettings: Sendable, Equatable {
  /// `otlp-endpoint = "https://collector.example:4318"`: the collector's OTLP/HTTP base address
  /// (spans go to `…/v1/traces`). Credentials in it (`user:password@`) are refused.
  package var endpoint: String
  /// `headers = { authorization = "…" }`: sent with every export (``allHeaders``); names are
  /// HTTP tokens, values hold no control character.
  package var headers: [String: String] = [:]
  /// `headers-file = "/path"`: `name: value` lines, kept out of the config (a secret).
  package var headersFile: String?
  /// The headers of ``headersFile``, once read (``loadingHeadersFile(configFile:)``).
  package var fileHeaders: [String: String] = [:]
  /// What every export sends: ``headers`` and ``fileHeaders``.
  package var allHeaders: [String: String] { headers.merging(fileHeaders) { first, _ in first } }
  /// `ca-file = "/path"`: the CA bundle a collector behind a private CA is verified with,
  /// instead of the system store (verification itself cannot be turned off).
  package var caFile: String?
  /// `allow-insecure = true`: headers may go to an `http://` endpoint, in clear.
  package var allowInsecure = false
  /// `telemetry-network = "unmetered"` (default) or `"any"`: the network exports wait for.
  package var network: NetworkRequirement = .unmetered
  /// `exporter = "/path"`: the exporter program; by default `backgrounder-otlp-export` next to
  /// the `backgrounder` executable.
  package var exporter: String?
  /// `buffer = 10000`: how many runs the store keeps while they cannot be sent; past it the
  /// oldest is dropped and counted.
  package var buffer = 10_000

  package init(endpoint: String) {
    self.endpoint = endpoint
  }
}

extension TelemetrySettings {
  /// These settings with the headers of ``headersFile`` added (the file is read by the daemon
  /// at start and by `doctor`, not by every verb that reads the config: the others need no
  /// secret); a problem is a configuration error of `configFile` naming `headers-file`.
  package func loadingHeadersFile(configFile: String) throws(ConfigurationError)
    -> TelemetrySettings
  {
    guard let path = headersFile else { return self }
    func problem(_ message: String) -> ConfigurationError {
      ConfigurationError(
        file: configFile, line: nil, key: "telemetry.headers-file", message: message)
    }
    let file: String
    do throws(EnvironmentFile.Failure) {
      file = try EnvironmentFile.resolve(path, environment: ProcessInfo.processInfo.environment)
    } catch {
      throw problem(
        "\(path): $CREDENTIALS_DIRECTORY is not set (the daemon does not run under a systemd "
          + "unit with LoadCredential=)")
    }
    let lines: [(String, String)]
    do throws(TelemetrySettingsReader.HeadersFileError) {
      lines = try TelemetrySettingsReader.readHeadersFile(file)
    } catch {
      throw problem(error.description)
    }
    var settings = self
    for (name, value) in lines {
      guard !settings.allHeaders.keys.contains(where: { $0.lowercased() == name.lowercased() })
      else {
        throw problem("header \"\(name)\" is set twice (in `headers` and in \(path))")
      }
      settings.fileHeaders[name] = value
    }
    return settings
  }
}

/// Reads and checks the `[telemetry]` table. No message shows a header value or the
/// credentials of an endpoint.
enum TelemetrySettingsReader {
  static let keys = [
    "otlp-endpoint", "headers", "headers-file", "ca-file", "allow-insecure", "telemetry-network",
    "exporter", "buffer",
  ]
  /// The most a `headers-file` may hold.
  static let headersFileLimit = 64 * 1024

  /// The settings of `table`; nil when it sets no `otlp-endpoint` (telemetry is off).
  static func read(_ table: TableReader) throws(ConfigurationError) -> TelemetrySettings? {
    try table.rejectUnknownKeys(keys)
    guard let endpoint = try table.string("otlp-endpoint") else {
      for key in keys where table.contains(key) {
        throw table.error(key, "`\(key)` needs `otlp-endpoint` (telemetry is off without it)")
      }
      return nil
    }
    guard !hasCredentials(endpoint) else {
      throw table.error(
        "otlp-endpoint",
        "credentials in the address (user:password@) are refused (the address is not shown): "
          + "put a token in `headers-file` instead")
    }
    guard endpoint.hasPrefix("https://") || endpoint.hasPrefix("http://"),
      !endpoint.contains(where: \.isWhitespace)
    else {
      throw table.error(
        "otlp-endpoint",
        "expected an http:// or https:// address such as \"https://collector.example:4318\", "
          + "got \"\(endpoint)\"")
    }
    var settings = TelemetrySettings(endpoint: endpoint)
    let inline = try table.stringTable("headers") ?? [:]
    for (name, value) in inline {
      if let problem = problem(name: name, value: value) {
        throw table.error("headers", problem)
      }
    }
    settings.headers = inline
    if let path = try table.string("headers-file") {
      // (the paths of a job's environment-file: absolute, or a systemd credential)
      if let problem = EnvironmentFile.problem(withPath: path) {
        throw table.error("headers-file", problem)
      }
      settings.headersFile = path
    }
    settings.allowInsecure = try table.bool("allow-insecure") ?? false
    if endpoint.hasPrefix("http://"),
      !settings.headers.isEmpty || settings.headersFile != nil, !settings.allowInsecure
    {
      throw table.error(
        "otlp-endpoint",
        "an http:// endpoint would send the headers in clear: use https://, or set "
          + "`allow-insecure = true`")
    }
    if let caFile = try table.string("ca-file") {
      guard caFile.hasPrefix("/") else {
        throw table.error("ca-file", "expected an absolute path, got \"\(caFile)\"")
      }
      guard endpoint.hasPrefix("https://") else {
        throw table.error("ca-file", "needs an https:// `otlp-endpoint`")
      }
      var info = stat()
      guard stat(caFile, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
        throw table.error("ca-file", "\(caFile) is not a readable regular file")
      }
      settings.caFile = caFile
    }
    if let network = try table.string("telemetry-network") {
      switch network {
      case "unmetered": settings.network = .unmetered
      case "any": settings.network = .any
      default:
        throw table.error(
          "telemetry-network", "expected \"unmetered\" or \"any\", got \"\(network)\"")
      }
    }
    if let exporter = try table.string("exporter") {
      guard exporter.hasPrefix("/") else {
        throw table.error("exporter", "expected an absolute path, got \"\(exporter)\"")
      }
      settings.exporter = exporter
    }
    settings.buffer = try table.int("buffer", in: 1...1_000_000) ?? settings.buffer
    return settings
  }

  /// True when `endpoint`'s authority holds a `@` (`https://user:password@host`).
  static func hasCredentials(_ endpoint: String) -> Bool {
    guard let colon = endpoint.firstIndex(of: ":"), endpoint[colon...].hasPrefix("://") else {
      return false
    }
    return endpoint[endpoint.index(colon, offsetBy: 3)...]
      .prefix { $0 != "/" && $0 != "?" && $0 != "#" }.contains("@")
  }

  /// What is wrong with header `name: value`, never showing the value; nil when nothing.
  static func problem(name: String, value: String) -> String? {
    let token = "!#$%&'*+-.^_`|~"
    let nameIsToken =
      !name.isEmpty
      && name.unicodeScalars.allSatisfy {
        $0.isASCII
          && ($0.properties.isAlphabetic || ("0"..."9").contains($0)
            || token.unicodeScalars.contains($0))
      }
    guard nameIsToken else {
      return "header name \(name.debugDescription) is not an HTTP token "
        + "(letters, digits and !#$%&'*+-.^_`|~; no colon, space or control character)"
    }
    // (a field value: visible characters, spaces and tabs; RFC 9110 5.5)
    guard
      !value.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F })
    else {
      return "the value of header \"\(name)\" holds a control character (CR, LF, NUL, …); "
        + "the value is not shown"
    }
    return nil
  }

  /// Why a `headers-file` cannot be used.
  struct HeadersFileError: Error, CustomStringConvertible {
    var description: String
  }

  /// The `name: value` lines of the file at `path` (blank lines and `#` comments skipped). The
  /// file is reached under the whole-path rule (``TrustedDirectory``), must be a regular file
  /// owned by root or this user, readable by no one else but its group, and writable by its
  /// owner only.
  static func readHeadersFile(_ path: String) throws(HeadersFileError) -> [(String, String)] {
    let bytes: [UInt8]
    do {
      let (directory, name) = try TrustedDirectory.open(
        containing: path, creating: false, owners: .ownUserOrRoot)
      guard let status = try directory.status(of: name) else {
        throw PrivateDirectoryError.system(
          SystemCallError("open", path: path, errno: .noSuchFileOrDirectory))
      }
      guard status.owner == 0 || status.owner == geteuid() else {
        throw PrivateDirectoryError.untrustedOwner(
          path: path, owner: status.owner, mode: status.permissions, expected: .ownUserOrRoot)
      }
      guard status.permissions & 0o027 == 0 else {
        throw HeadersFileError(
          description: "refusing to use \(path): it holds secrets and is readable or writable "
            + "by others (mode \(PrivateDirectoryError.octal(status.permissions))); "
            + "run `chmod 0600 \(path)`")
      }
      bytes = try BoundedFile.read(name, in: directory, limit: headersFileLimit)
    } catch let error as PrivateDirectoryError {
      throw HeadersFileError(description: error.description)
    } catch let error as HeadersFileError {
      throw error
    } catch {
      throw HeadersFileError(description: "\(error)")
    }
    var headers: [(String, String)] = []
    for (index, line) in String(decoding: bytes, as: UTF8.self)
      .split(separator: "\n", omittingEmptySubsequences: false).enumerated()
    {
      let text = line.hasSuffix("\r") ? line.dropLast() : line
      let trimmed = text.drop { $0 == " " || $0 == "\t" }
      if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
      guard let colon = text.firstIndex(of: ":") else {
        throw HeadersFileError(
          description: "\(path), line \(index + 1): expected `name: value` (the line is not shown)")
      }
      let name = String(text[..<colon])
      let value = String(text[text.index(after: colon)...].drop { $0 == " " || $0 == "\t" })
      if let problem = problem(name: name, value: value) {
        throw HeadersFileError(description: "\(path), line \(index + 1): \(problem)")
      }
      headers.append((name, value))
    }
    return headers
  }
}
