import Foundation

/// The benchmark's own network namespace with `veth0` (192.0.2.1/24) and its peer `veth1`.
struct BenchmarkNamespace {
  let name: String
  var path: String { "/var/run/netns/\(name)" }

  static func create() throws -> BenchmarkNamespace {
    let namespace = BenchmarkNamespace(name: "bgbench-\(getpid())")
    try shell(["netns", "add", namespace.name])
    for command in [
      ["link", "set", "lo", "up"],
      ["link", "add", "veth0", "type", "veth", "peer", "name", "veth1"],
      ["link", "set", "veth1", "up"], ["link", "set", "veth0", "up"],
      ["addr", "add", "192.0.2.1/24", "dev", "veth0"],
    ] {
      try shell(["-n", namespace.name] + command)
    }
    return namespace
  }

  func interfaceIndex(_ name: String) throws -> Int32 {
    let output = try shell(["-n", self.name, "-o", "link", "show", name])
    guard let index = output.split(separator: ":").first.flatMap({ Int32($0) }) else {
      throw BenchmarkError("cannot read the index of \(name) from `\(output)`")
    }
    return index
  }

  func remove() { _ = try? shell(["netns", "del", name]) }
}

struct BenchmarkError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

@discardableResult
func shell(_ arguments: [String], executable: String = "/usr/sbin/ip") throws -> String {
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
