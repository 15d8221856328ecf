import Testing

@testable import PowerSource

/// Unparseable values make that attribute unknown: no crash, no wrong "true", a named problem.
@Suite struct GarbageValueTests {
  private func evaluate(_ attributes: [String: String], name: String = "BAT0") -> PowerStatus {
    var model = PowerModel()
    return model.update([PowerSupplySnapshot(name: name, attributes: attributes)])
  }

  @Test func garbageFixtureNamesEveryBadAttribute() throws {
    var model = PowerModel()
    let status = model.update(
      try PowerSupplyReader(sysfsRoot: FixtureFiles.scenario("garbage-values")).read())
    let attributes = status.problems.map { $0.prefix { $0 != ":" } }
    #expect(
      Set(attributes) == [
        "AC/online", "BAT0/status", "BAT0/present", "BAT0/scope", "BAT0/capacity",
        "BAT0/capacity_level", "BAT0/energy_now", "BAT0/charge_now", "BAT0/charge_full",
        "weird0/type",
      ])
    #expect(status.problems.contains("AC/online: unparseable value \"yes\\n\""))
    let weird = try #require(status.supplies.first { $0.name == "weird0" })
    #expect(weird.type == nil, "an unknown type is shown as null, not as raw bytes")
    #expect(weird.online == 1)
    #expect(!status.externalPower, "online=yes and an unknown type must not claim power")
    #expect(!status.charging, "an unparseable battery status must not claim power")
  }

  @Test(arguments: ["", "1.5", "-1", "one", "0x1", "1 1"])
  func unparseableOnlineIsNotExternalPower(online: String) {
    let status = evaluate(["type": "Mains", "online": online], name: "AC")
    #expect(!status.externalPower)
    #expect(status.supplies.first?.online == nil)
  }

  @Test(arguments: ["101", "-3", "abc", "50%", ""])
  func unparseableCapacityIsUnknown(capacity: String) {
    let status = evaluate(["type": "Battery", "status": "Discharging", "capacity": capacity])
    #expect(status.batteryPercent == nil)
    #expect(status.supplies.first?.capacity == nil)
    #expect(status.problems.count == 1)
  }

  @Test func zeroFullEnergyFallsBackToCapacity() {
    let status = evaluate([
      "type": "Battery", "status": "Discharging", "capacity": "44", "energy_now": "10",
      "energy_full": "0",
    ])
    #expect(status.batteryPercent == 44)
  }

  @Test func missingStatusOnABatteryIsNotClaimedAsPower() {
    let status = evaluate(["type": "Battery", "capacity": "44"])
    #expect(!status.charging)
    #expect(status.problems.isEmpty, "a missing attribute is not a problem")
  }

  @Test func unknownTypeReportingDischargingIsTreatedAsABattery() {
    #expect(!evaluate(["type": "Gizmo", "status": "Discharging"], name: "g").charging)
    #expect(evaluate(["type": "Gizmo", "status": "Full"], name: "g").charging)
  }

  @Test func unreadableAttributeIsAProblemAndUnknown() {
    var model = PowerModel()
    let status = model.update([
      PowerSupplySnapshot(
        name: "BAT0", attributes: ["type": "Battery", "capacity": "50"],
        unreadable: ["status": "Input/output error"])
    ])
    #expect(!status.charging)
    #expect(status.problems == ["BAT0/status: unreadable (Input/output error)"])
  }

  @Test func unreadableClassDirectoryClaimsNothing() {
    var model = PowerModel()
    let status = model.unreadable(reason: "cannot list /x: Permission denied")
    #expect(!status.externalPower)
    #expect(!status.charging)
    #expect(status.batteryLow)
    #expect(status.problems == ["cannot list /x: Permission denied"])
  }
}
