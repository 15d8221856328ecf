import Foundation

/// Paths into the repository's `Fixtures/` folder.
enum FixturePaths {
  /// `Tests/BackgrounderDaemonTests/Support/FixturePaths.swift` → the repository's root.
  static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Fixtures")

  static func config(_ name: String) -> String {
    root.appendingPathComponent("config").appendingPathComponent(name).path
  }
}
