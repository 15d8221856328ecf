import Testing

@testable import PowerSource

@Suite struct UeventParserTests {
  @Test func realKernelCaptureParses() throws {
    let message = try UeventParser.parse(try FixtureFiles.uevent("kernel-net-add-veth.bin"))
    guard case .kernel(let event) = message else {
      Issue.record("expected a kernel uevent, got \(message)")
      return
    }
    #expect(event.action == "add")
    #expect(event.devpath == "/devices/virtual/net/bgA")
    #expect(event.subsystem == "net")
    #expect(event["ACTION"] == "add")
    #expect(event["INTERFACE"] == "bgA")
    #expect(
      event.properties.map(\.key) == [
        "ACTION", "DEVPATH", "SUBSYSTEM", "INTERFACE", "IFINDEX", "SEQNUM",
      ])
  }

  @Test func builtPowerSupplyUeventParses() throws {
    let message = try UeventParser.parse(try FixtureFiles.uevent("ac-online.bin"))
    guard case .kernel(let event) = message else {
      Issue.record("expected a kernel uevent, got \(message)")
      return
    }
    #expect(event.action == "change")
    #expect(event.devpath.hasSuffix("/power_supply/AC"))
    #expect(event.subsystem == "power_supply")
    #expect(event["POWER_SUPPLY_ONLINE"] == "1")
  }

  @Test func bytesRoundTrip() throws {
    let bytes = try FixtureFiles.uevent("battery-change.bin")
    guard case .kernel(let event) = try UeventParser.parse(bytes) else {
      Issue.record("expected a kernel uevent")
      return
    }
    #expect(event.bytes == bytes)
  }

  @Test func valueMayContainEqualsSignsAndTrailingNulIsOptional() throws {
    let message = try UeventParser.parse(Array("change@/x\0KEY=a=b\0EMPTY=".utf8))
    #expect(
      message
        == .kernel(
          Uevent(
            action: "change", devpath: "/x",
            properties: [
              ("KEY", "a=b"), ("EMPTY", ""),
            ])))
  }

  @Test func udevMonitorFormatIsRecognisedAndSkipped() throws {
    #expect(
      try UeventParser.parse(try FixtureFiles.uevent("udev-monitor-power.bin")) == .udevMonitor)
  }

  @Test(arguments: [
    ("empty.bin", UeventParseError.empty),
    ("malformed-no-at.bin", .malformedHeader("change-without-devpath")),
    ("malformed-field.bin", .malformedField(index: 4, "NOEQUALSSIGN")),
    ("malformed-utf8.bin", .invalidUTF8(field: 0)),
  ])
  func malformedDatagramsAreNamedErrors(file: String, expected: UeventParseError) throws {
    let bytes = try FixtureFiles.uevent(file)
    #expect(throws: expected) { try UeventParser.parse(bytes) }
    #expect(!expected.description.isEmpty)
  }

  @Test(arguments: [
    ("@/devpath", UeventParseError.malformedHeader("@/devpath")),
    ("change@", .malformedHeader("change@")), ("=x\0", .malformedHeader("=x")),
    ("\0\0\0", .empty), ("a@b\0=value", .malformedField(index: 1, "=value")),
  ])
  func edgeCasesAreErrorsNamingTheBadPart(text: String, expected: UeventParseError) {
    #expect(throws: expected) { try UeventParser.parse(Array(text.utf8)) }
  }
}
