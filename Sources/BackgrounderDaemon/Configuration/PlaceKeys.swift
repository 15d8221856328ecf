import Backgrounder

/// The keys of a `[[job]]` that say where it may run: `ssids`, `interfaces` (network
/// allow-lists, globs), `requires-mount` (a path that must be a mount point) and
/// `requires-reachable` (a `host:port` a TCP connect must reach).
enum PlaceKeys {
  static let keys = ["ssids", "interfaces", "requires-mount", "requires-reachable"]

  /// Reads the keys of `job` into `definition` (checked later by ``problem(with:)``).
  static func read(
    _ job: TableReader, into definition: inout JobDefinition
  ) throws(ConfigurationError) {
    definition.ssids = try job.stringArray("ssids")
    definition.interfaces = try job.stringArray("interfaces")
    definition.requiresMount = try job.string("requires-mount")
    definition.requiresReachable = try job.string("requires-reachable")
  }

  /// The first rule the keys of `job` break, as the key and what is wrong; nil if none.
  static func problem(with job: JobDefinition) -> (key: String, message: String)? {
    for (key, list) in [("ssids", job.ssids), ("interfaces", job.interfaces)] {
      guard let list else { continue }
      if list.isEmpty {
        return (key, "must list at least one glob (leave the key out to allow any network)")
      }
      if let index = list.firstIndex(where: \.isEmpty) {
        return ("\(key)[\(index)]", "must not be empty")
      }
    }
    if let path = job.requiresMount, let problem = mountPathProblem(path) {
      return ("requires-mount", problem)
    }
    if let text = job.requiresReachable, case .failure(let error) = Destination.parse(text) {
      return ("requires-reachable", error.message)
    }
    return nil
  }

  /// What is wrong with `path` as a mount point to wait for, or nil. The kernel lists mount
  /// points as absolute paths with no `.`, `..`, empty component or trailing `/`, and the path
  /// is compared as written: one written another way could never match.
  static func mountPathProblem(_ path: String) -> String? {
    guard path.hasPrefix("/") else { return "must be an absolute path, got \"\(path)\"" }
    if path == "/" { return "\"/\" is always mounted" }
    if path.utf8.contains(0) { return "must not contain NUL" }
    let components = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
    if components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) {
      return "must be written without `.`, `..`, `//` or a trailing `/`, got \"\(path)\""
    }
    return nil
  }
}

extension DaemonConfiguration {
  /// The `requires-reachable` destinations of the jobs, for the destination monitor.
  package var requiredDestinations: Set<String> {
    Set(jobs.compactMap(\.requiresReachable))
  }
}
