import Foundation
import Testing

@testable import PowerSource

@Suite struct PowerSupplyReaderTests {
  @Test func missingClassDirectoryMeansNoSupplies() throws {
    let root = NSTemporaryDirectory() + "power-empty-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    #expect(try PowerSupplyReader(sysfsRoot: root).read().isEmpty)
    #expect(try PowerSupplyReader(sysfsRoot: root + "/does-not-exist").read().isEmpty)
  }

  @Test func dotFilesAndPlainFilesAreSkipped() throws {
    let names = try PowerSupplyReader(sysfsRoot: FixtureFiles.scenario("desktop-no-supplies"))
      .read().map(\.name)
    #expect(names.isEmpty)
  }

  @Test func readsRawAttributesAndLeavesMissingOnesOut() throws {
    let supplies = try PowerSupplyReader(sysfsRoot: FixtureFiles.scenario("missing-attributes"))
      .read()
    #expect(supplies.map(\.name) == ["AC", "BAT0"])
    #expect(supplies[0].attributes == ["type": "Mains\n"])
    #expect(supplies[1].attributes == ["type": "Battery\n", "capacity_level": "Low\n"])
    #expect(supplies[1].unreadable.isEmpty)
  }

  @Test func symlinkedSupplyDirectoriesAreFollowed() throws {
    // Real sysfs: class/power_supply/BAT0 is a symlink into /sys/devices.
    let scratch = try ScratchTree(copying: "laptop-charging")
    defer { scratch.remove() }
    let classDirectory = scratch.root + "/class/power_supply"
    try FileManager.default.createDirectory(
      atPath: scratch.root + "/devices", withIntermediateDirectories: true)
    try FileManager.default.moveItem(
      atPath: classDirectory + "/BAT0", toPath: scratch.root + "/devices/BAT0")
    try FileManager.default.createSymbolicLink(
      atPath: classDirectory + "/BAT0", withDestinationPath: "../../devices/BAT0")
    let supplies = try PowerSupplyReader(sysfsRoot: scratch.root).read()
    #expect(supplies.map(\.name) == ["AC", "BAT0"])
    #expect(supplies[1].attributes["status"] == "Charging\n")
  }

  @Test func unreadableAttributeIsRecordedWithItsReason() throws {
    let scratch = try ScratchTree(copying: "laptop-charging")
    defer { scratch.remove() }
    // A directory where a file should be: open succeeds, read fails with EISDIR.
    let path = scratch.root + "/class/power_supply/BAT0/status"
    try FileManager.default.removeItem(atPath: path)
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    let battery = try #require(
      try PowerSupplyReader(sysfsRoot: scratch.root).read().first { $0.name == "BAT0" })
    #expect(battery.attributes["status"] == nil)
    #expect(battery.unreadable["status"] != nil)
  }

  @Test(.timeLimit(.minutes(3)))
  func aFifoWhereAnAttributeShouldBeNeverBlocksTheRead() throws {
    let scratch = try ScratchTree(copying: "laptop-charging")
    defer { scratch.remove() }
    let path = scratch.root + "/class/power_supply/BAT0/capacity"
    try FileManager.default.removeItem(atPath: path)
    #expect(mkfifo(path, 0o600) == 0)
    let battery = try #require(
      try PowerSupplyReader(sysfsRoot: scratch.root).read().first { $0.name == "BAT0" })
    #expect(battery.attributes["status"] == "Charging\n")
  }

  @Test func nonUTF8AttributeIsUnreadable() throws {
    let scratch = try ScratchTree(copying: "laptop-charging")
    defer { scratch.remove() }
    try Data([0xFF, 0xFE, 0x0A]).write(
      to: URL(fileURLWithPath: scratch.root + "/class/power_supply/BAT0/capacity"))
    let battery = try #require(
      try PowerSupplyReader(sysfsRoot: scratch.root).read().first { $0.name == "BAT0" })
    #expect(battery.unreadable["capacity"] == "not UTF-8")
  }

  @Test func unlistableClassDirectoryIsAnError() throws {
    let root = NSTemporaryDirectory() + "power-loop-\(UUID().uuidString)"
    try FileManager.default.createDirectory(
      atPath: root + "/class", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    // A symlink to itself: opendir fails with ELOOP (EACCES cannot be provoked as root).
    try FileManager.default.createSymbolicLink(
      atPath: root + "/class/power_supply", withDestinationPath: "power_supply")
    #expect(
      throws: PowerSupplyReaderError.cannotList(
        path: root + "/class/power_supply", .tooManySymbolicLinkLevels)
    ) {
      try PowerSupplyReader(sysfsRoot: root).read()
    }
  }

  @Test func classDirectoryThatIsAFileIsNoSupplies() throws {
    let root = NSTemporaryDirectory() + "power-file-\(UUID().uuidString)"
    try FileManager.default.createDirectory(
      atPath: root + "/class", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    #expect(FileManager.default.createFile(atPath: root + "/class/power_supply", contents: Data()))
    #expect(try PowerSupplyReader(sysfsRoot: root).read().isEmpty)
  }
}
