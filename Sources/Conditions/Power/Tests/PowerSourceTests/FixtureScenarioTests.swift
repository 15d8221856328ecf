import Foundation
import Testing

@testable import PowerSource

/// Every fixture tree, read from disk through ``PowerSupplyReader`` and evaluated.
@Suite struct FixtureScenarioTests {
  struct Expectation: Sendable, CustomTestStringConvertible {
    var scenario: String
    var externalPower: Bool
    var charging: Bool
    var batteryPercent: Double?
    var batteryLow: Bool
    var supplies: [String]
    var testDescription: String { scenario }
  }

  static let expectations: [Expectation] = [
    .init(
      scenario: "laptop-charging", externalPower: true, charging: true, batteryPercent: 57,
      batteryLow: false, supplies: ["AC", "BAT0"]),
    .init(
      scenario: "laptop-discharging", externalPower: false, charging: false, batteryPercent: 32,
      batteryLow: false, supplies: ["AC", "BAT0"]),
    .init(
      scenario: "laptop-discharging-low", externalPower: false, charging: false,
      batteryPercent: 15, batteryLow: true, supplies: ["AC", "BAT0"]),
    .init(
      scenario: "full-on-ac", externalPower: true, charging: true, batteryPercent: 100,
      batteryLow: false, supplies: ["AC", "BAT0"]),
    .init(
      scenario: "desktop-no-supplies", externalPower: false, charging: true, batteryPercent: nil,
      batteryLow: false, supplies: []),
    .init(
      scenario: "desktop-mouse-only", externalPower: false, charging: true, batteryPercent: nil,
      batteryLow: false, supplies: ["hidpp_battery_0"]),
    .init(
      scenario: "usb-c-not-charging-threshold", externalPower: true, charging: true,
      batteryPercent: 80, batteryLow: false,
      supplies: ["ADP1", "BAT0", "ucsi-source-psy-USBC000:001"]),
    .init(
      scenario: "two-batteries", externalPower: false, charging: false, batteryPercent: 42.9,
      batteryLow: false, supplies: ["AC", "BAT0", "BAT1"]),
    .init(
      scenario: "missing-attributes", externalPower: false, charging: false, batteryPercent: nil,
      batteryLow: true, supplies: ["AC", "BAT0"]),
    .init(
      scenario: "garbage-values", externalPower: false, charging: false, batteryPercent: nil,
      batteryLow: false, supplies: ["AC", "BAT0", "weird0"]),
  ]

  private func status(_ scenario: String) throws -> PowerStatus {
    var model = PowerModel()
    return model.update(try PowerSupplyReader(sysfsRoot: FixtureFiles.scenario(scenario)).read())
  }

  @Test(arguments: expectations)
  func scenario(_ expected: Expectation) throws {
    let status = try status(expected.scenario)
    #expect(status.externalPower == expected.externalPower)
    #expect(status.charging == expected.charging)
    #expect(status.batteryPercent == expected.batteryPercent)
    #expect(status.batteryLow == expected.batteryLow)
    #expect(status.isBatteryNotLow == !expected.batteryLow)
    #expect(status.supplies.map(\.name) == expected.supplies)
  }

  @Test func everyScenarioDirectoryHasAnExpectation() throws {
    let directories = try FileManager.default.contentsOfDirectory(atPath: FixtureFiles.powerSupply)
      .filter { FileManager.default.fileExists(atPath: FixtureFiles.scenario($0) + "/class") }
    #expect(Set(directories) == Set(Self.expectations.map(\.scenario)))
  }

  @Test func supplyRowsShowTheRawValues() throws {
    let status = try status("usb-c-not-charging-threshold")
    let usb = try #require(status.supplies.first { $0.name.hasPrefix("ucsi") })
    #expect(
      usb
        == PowerSupplyStatus(
          name: "ucsi-source-psy-USBC000:001", type: "USB", online: 1, status: "Not charging",
          capacity: nil, scope: "System"))
    let battery = try #require(status.supplies.first { $0.name == "BAT0" })
    #expect(battery.status == "Not charging")
    #expect(battery.capacity == 80)
    #expect(status.problems.isEmpty)
  }

  @Test func jsonHasExactlyTheDocumentedKeysWithNulls() throws {
    let data = try JSONEncoder().encode(try status("garbage-values"))
    let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    #expect(
      Set(object.keys) == ["externalPower", "charging", "batteryPercent", "batteryLow", "supplies"])
    #expect(object["batteryPercent"] is NSNull)
    #expect(object["charging"] as? Bool == false)
    let supplies = try #require(object["supplies"] as? [[String: Any]])
    let battery = try #require(supplies.first { $0["name"] as? String == "BAT0" })
    #expect(Set(battery.keys) == ["name", "type", "online", "status", "capacity", "scope"])
    #expect(battery["status"] is NSNull)
    #expect(battery["capacity"] is NSNull)
    #expect(battery["scope"] is NSNull)
    #expect(battery["type"] as? String == "battery")
  }

  @Test func jsonForACharger() throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let json = String(decoding: try encoder.encode(try status("laptop-charging")), as: UTF8.self)
    #expect(
      json == """
        {"batteryLow":false,"batteryPercent":57,"charging":true,"externalPower":true,\
        "supplies":[{"capacity":null,"name":"AC","online":1,"scope":"System","status":null,\
        "type":"Mains"},{"capacity":57,"name":"BAT0","online":null,"scope":"System",\
        "status":"Charging","type":"Battery"}]}
        """)
  }
}
