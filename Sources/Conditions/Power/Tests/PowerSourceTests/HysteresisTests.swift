import Testing

@testable import PowerSource

/// batteryLow: low at ≤ 20 %, not low again only above 25 %.
@Suite struct HysteresisTests {
  private func battery(_ capacity: Int, _ status: String = "Discharging") -> [PowerSupplySnapshot] {
    [
      PowerSupplySnapshot(name: "AC", attributes: ["type": "Mains", "online": "0"]),
      PowerSupplySnapshot(
        name: "BAT0", attributes: ["type": "Battery", "status": status, "capacity": "\(capacity)"]),
    ]
  }

  @Test func dischargeThenRecharge() {
    var model = PowerModel()
    let sequence: [(Int, Bool)] = [
      (30, false), (21, false), (20, true), (15, true), (22, true), (25, true), (26, false),
      (23, false), (20, true),
    ]
    for (capacity, expectedLow) in sequence {
      let status = model.update(battery(capacity))
      #expect(status.batteryLow == expectedLow, "at \(capacity) %")
      #expect(model.wasLow == expectedLow)
    }
  }

  @Test func goingOnPowerClearsTheLowState() {
    var model = PowerModel()
    #expect(model.update(battery(18)).batteryLow)
    #expect(!model.update(battery(18, "Charging")).batteryLow)
    // Unplugged again at 22 %: not low, because the low state was cleared while on power.
    #expect(!model.update(battery(22)).batteryLow)
  }

  @Test func levelOnlyBatteryHasNoHysteresis() {
    var model = PowerModel()
    let level: (String) -> [PowerSupplySnapshot] = { level in
      [
        PowerSupplySnapshot(
          name: "BAT0",
          attributes: ["type": "Battery", "status": "Discharging", "capacity_level": level])
      ]
    }
    #expect(model.update(level("Low")).batteryLow)
    #expect(!model.update(level("Normal")).batteryLow)
  }
}
