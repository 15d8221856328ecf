import Foundation

/// A network namespace a benchmark creates, configures with `ip -batch` and deletes.
public struct BenchmarkNamespace: Sendable {
  /// The namespace's name (`ip netns`).
  public let name: String
  /// Its bind mount, for `setns`.
  public var path: String { "/var/run/netns/\(name)" }

  /// Creates the namespace `name` with loopback up, then runs `commands` (`ip -batch` lines)
  /// in it.
  public static func create(name: String, commands: [String]) throws -> BenchmarkNamespace {
    let namespace = BenchmarkNamespace(name: name)
    try shell(["netns", "add", name])
    do {
      try namespace.batch(["link set lo up"] + commands)
    } catch {
      namespace.remove()
      throw error
    }
    return namespace
  }

  /// The `ip -batch` lines for `veth<N>` (up, with `address`) and its peer `veth<N+1>` (up).
  public static func vethPair(_ number: Int, address: String) -> [String] {
    [
      "link add veth\(number) type veth peer name veth\(number + 1)",
      "link set veth\(number + 1) up", "link set veth\(number) up",
      "addr add \(address) dev veth\(number)",
    ]
  }

  /// Runs `ip -n NAME -batch FILE` with these commands.
  public func batch(_ commands: [String]) throws {
    let file = "/tmp/\(name)-\(UInt32.random(in: 0...UInt32.max)).batch"
    try commands.joined(separator: "\n").appending("\n").write(
      toFile: file, atomically: true, encoding: .utf8)
    defer { unlink(file) }
    try shell(["-n", name, "-batch", file])
  }

  /// The interface index of `link` in the namespace.
  public func interfaceIndex(_ link: String) throws -> Int32 {
    let output = try shell(["-n", name, "-o", "link", "show", link])
    guard let index = output.split(separator: ":").first.flatMap({ Int32($0) }) else {
      throw BenchmarkError("cannot read the index of \(link) from `\(output)`")
    }
    return index
  }

  /// Deletes the namespace (and the links in it).
  public func remove() { _ = try? shell(["netns", "del", name]) }
}

/// A benchmark step that failed, with what went wrong.
public struct BenchmarkError: Error, CustomStringConvertible {
  public var description: String
  public init(_ description: String) { self.description = description }
}

/// Runs `executable ARGUMENTS` (default `ip`) and returns its stdout and stderr; throws with
/// that output when it exits non-zero.
@discardableResult
public func shell(_ arguments: [String], executable: String = "/usr/sbin/ip") throws -> String {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments
  let pipe = Pipe()
  process.standardOutput = pipe
  process.standardError = pipe
  try process.run()
  let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  process.waitUntilExit()
  guard process.terminationStatus == 0 else {
    throw BenchmarkError("\(executable) \(arguments.joined(separator: " ")) failed: \(output)")
  }
  return output
}
