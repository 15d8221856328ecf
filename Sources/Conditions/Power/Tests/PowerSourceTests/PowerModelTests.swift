import Testing

@testable import PowerSource

/// The rules of issue 3, on hand-built attribute sets.
@Suite struct PowerModelTests {
  private func evaluate(_ supplies: [PowerSupplySnapshot]) -> PowerStatus {
    var model = PowerModel()
    return model.update(supplies)
  }

  private func supply(_ name: String, _ attributes: [String: String]) -> PowerSupplySnapshot {
    PowerSupplySnapshot(name: name, attributes: attributes)
  }

  @Test(arguments: ["Mains", "USB", "USB_C", "USB_PD", "USB_PD_DRP", "Wireless", "UPS", "mains"])
  func nonBatteryOnlineIsExternalPower(type: String) {
    let status = evaluate([
      supply("src", ["type": type, "online": "1"]),
      supply("BAT0", ["type": "Battery", "status": "Discharging", "capacity": "50"]),
    ])
    #expect(status.externalPower)
    #expect(status.charging)
  }

  @Test func onlineTwoCountsAsExternalPower() {
    #expect(evaluate([supply("usb", ["type": "USB", "online": "2"])]).externalPower)
  }

  @Test func offlineMainsWithDischargingBatteryIsOnBattery() {
    let status = evaluate([
      supply("AC", ["type": "Mains", "online": "0"]),
      supply("BAT0", ["type": "Battery", "status": "Discharging", "capacity": "50"]),
    ])
    #expect(!status.externalPower)
    #expect(!status.charging)
  }

  @Test func batteryOnlineDoesNotCountAsExternalPower() {
    let status = evaluate([
      supply("BAT0", ["type": "Battery", "online": "1", "status": "Discharging"])
    ])
    #expect(!status.externalPower)
    #expect(!status.charging)
  }

  @Test(arguments: ["Not charging", "Full", "Charging", "Unknown", "  not CHARGING \n"])
  func nonDischargingBatteryCountsAsOnPower(batteryStatus: String) {
    let status = evaluate([
      supply("AC", ["type": "Mains", "online": "0"]),
      supply("BAT0", ["type": "Battery", "status": batteryStatus, "capacity": "10"]),
    ])
    #expect(!status.externalPower)
    #expect(status.charging)
    #expect(!status.batteryLow, "on power means batteryNotLow, even at 10 %")
  }

  @Test func noSuppliesIsOnPower() {
    let status = evaluate([])
    #expect(!status.externalPower)
    #expect(status.charging)
    #expect(status.batteryPercent == nil)
    #expect(!status.batteryLow)
  }

  @Test func deviceScopeIsIgnoredEntirely() {
    let mouse = supply(
      "hidpp_battery_0",
      ["type": "Battery", "scope": "Device", "status": "Discharging", "capacity": "12"])
    let dongle = supply("hid_dongle", ["type": "USB", "scope": "device", "online": "1"])
    let status = evaluate([mouse, dongle])
    #expect(!status.externalPower, "a peripheral's USB supply is not the machine's power")
    #expect(status.charging, "a discharging mouse does not put the machine on battery")
    #expect(status.batteryPercent == nil)
    #expect(!status.batteryLow)
    #expect(status.supplies.map(\.scope) == ["Device", "Device"])
  }

  @Test func missingScopeIsSystemAndMissingPresentIsPresent() {
    let status = evaluate([supply("BAT0", ["type": "Battery", "status": "Discharging"])])
    #expect(!status.charging)
    #expect(status.supplies.first?.scope == "System")
  }

  @Test func absentBatteryIsIgnored() {
    let status = evaluate([
      supply("BAT0", ["type": "Battery", "present": "0", "status": "Discharging", "capacity": "3"])
    ])
    #expect(status.charging)
    #expect(status.batteryPercent == nil)
    #expect(!status.batteryLow)
  }

  @Test func energyWeightedPercent() {
    let status = evaluate([
      supply(
        "BAT0",
        ["type": "Battery", "capacity": "20", "energy_now": "10000000", "energy_full": "50000000"]),
      supply(
        "BAT1",
        ["type": "Battery", "capacity": "100", "energy_now": "20000000", "energy_full": "20000000"]
      ),
    ])
    #expect(status.batteryPercent == 42.9)
  }

  @Test func chargeWeightedWhenEnergyIsMissing() {
    let status = evaluate([
      supply(
        "BAT0", ["type": "Battery", "capacity": "50", "charge_now": "1000", "charge_full": "2000"]),
      supply(
        "BAT1",
        [
          "type": "Battery", "capacity": "100", "charge_now": "6000", "charge_full": "6000",
          "energy_now": "1", "energy_full": "2",
        ]),
    ])
    #expect(status.batteryPercent == 87.5)
  }

  @Test func capacityMeanAsLastFallBack() {
    let status = evaluate([
      supply("BAT0", ["type": "Battery", "capacity": "40"]),
      supply("BAT1", ["type": "Battery", "capacity": "70", "energy_now": "1", "energy_full": "2"]),
    ])
    #expect(status.batteryPercent == 55)
  }

  @Test func percentIsClampedWhenNowExceedsFull() {
    let status = evaluate([
      supply("BAT0", ["type": "Battery", "energy_now": "51000000", "energy_full": "50000000"])
    ])
    #expect(status.batteryPercent == 100)
  }

  @Test func capacityLevelCountsAsLowOnlyWithoutANumber() {
    let levelOnly = evaluate([
      supply("BAT0", ["type": "Battery", "status": "Discharging", "capacity_level": "Critical"])
    ])
    #expect(levelOnly.batteryPercent == nil)
    #expect(levelOnly.batteryLow)

    let withNumber = evaluate([
      supply(
        "BAT0",
        ["type": "Battery", "status": "Discharging", "capacity_level": "Low", "capacity": "60"])
    ])
    #expect(!withNumber.batteryLow, "a readable percent wins over capacity_level")

    let normal = evaluate([
      supply("BAT0", ["type": "Battery", "status": "Discharging", "capacity_level": "Normal"])
    ])
    #expect(!normal.batteryLow)
  }

  @Test func lowBatteryThresholdIsTwentyPercent() {
    let at20 = evaluate([
      supply("BAT0", ["type": "Battery", "status": "Discharging", "capacity": "20"])
    ])
    let at21 = evaluate([
      supply("BAT0", ["type": "Battery", "status": "Discharging", "capacity": "21"])
    ])
    #expect(at20.batteryLow)
    #expect(!at20.isBatteryNotLow)
    #expect(!at21.batteryLow)
    #expect(at21.isBatteryNotLow)
  }

  @Test func externalPowerMakesBatteryNotLow() {
    let status = evaluate([
      supply("AC", ["type": "Mains", "online": "1"]),
      supply("BAT0", ["type": "Battery", "status": "Charging", "capacity": "5"]),
    ])
    #expect(!status.batteryLow)
    #expect(status.batteryPercent == 5)
  }
}
