import Foundation

/// Paths into `Fixtures/power_supply` and scratch copies of its trees.
enum FixtureFiles {
  /// `…/Fixtures/power_supply`, found from this file's path.
  static let powerSupply: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(6)  // Sources/Conditions/Power/Tests/PowerSourceTests/FixtureFiles.swift
    return parts.joined(separator: "/") + "/Fixtures/power_supply"
  }()

  /// The sysfs root of a scenario.
  static func scenario(_ name: String) -> String { powerSupply + "/" + name }

  /// The bytes of `uevents/<name>`.
  static func uevent(_ name: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: powerSupply + "/uevents/" + name)))
  }
}

/// A writable copy of a fixture tree in a temporary directory, removed by ``remove()``.
struct ScratchTree {
  let root: String

  init(copying scenario: String) throws {
    root = NSTemporaryDirectory() + "power-\(UUID().uuidString)"
    try FileManager.default.copyItem(atPath: FixtureFiles.scenario(scenario), toPath: root)
  }

  /// Overwrites `class/power_supply/<supply>/<attribute>` the way the kernel shows it.
  func set(_ supply: String, _ attribute: String, _ value: String) throws {
    let path = root + "/class/power_supply/" + supply + "/" + attribute
    try (value + "\n").write(toFile: path, atomically: false, encoding: .utf8)
  }

  func remove() {
    try? FileManager.default.removeItem(atPath: root)
  }
}
