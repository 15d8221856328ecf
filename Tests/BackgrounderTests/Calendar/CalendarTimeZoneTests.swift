import Foundation
import Testing

@testable import Backgrounder

/// Zones read from the system's tz database against glibc's own reading of it (`date`).
@Suite("Calendar time zones")
struct CalendarTimeZoneTests {
  /// `TZ=zone date -f - '+%s %z %Z'` for each instant: glibc's offset and abbreviation.
  private static func glibc(_ zone: String, _ instants: [Int64]) throws -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/date")
    process.arguments = ["-f", "-", "+%z %Z"]
    process.environment = ["TZ": zone, "LC_ALL": "C"]
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    input.fileHandleForWriting.write(Data(instants.map { "@\($0)\n" }.joined().utf8))
    try input.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
  }

  private static func formatted(_ offset: Int, _ abbreviation: String) -> String {
    let magnitude = abs(offset)
    let hours = String(format: "%02d%02d", magnitude / 3600, magnitude / 60 % 60)
    return (offset < 0 ? "-" : "+") + hours + " " + abbreviation
  }

  @Test(
    "offsets and abbreviations match glibc's, 1900–2150, transitions and the TZ-rule footer",
    arguments: [
      "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Europe/Dublin",
      "Pacific/Chatham", "Africa/Casablanca", "America/Santiago", "Asia/Kolkata", "UTC",
    ])
  func matchesGlibc(zone identifier: String) throws {
    let zone = try #require(CalendarTimeZone(identifier: identifier))
    var random = SplitMix64(seed: 0x747A)
    var instants: [Int64] = (0..<400).map { _ in
      Int64(random.next(in: -2_208_988_800...5_680_281_600))
    }
    // Either side of the DST changes of 2024 and 2100.
    for year in [2024, 2100] {
      for day in stride(from: 0, to: 366, by: 1) {
        instants.append(Int64(CivilTime.days(year: year, month: 1, day: 1) + day) * 86_400 + 3600)
      }
    }
    let expected = try Self.glibc(identifier, instants)
    let ours = instants.map {
      Self.formatted(zone.offset(atSeconds: $0), zone.abbreviation(atSeconds: $0))
    }
    let differences = zip(zip(instants, ours), expected).filter { $0.0.1 != $0.1 }
    #expect(expected.count == instants.count)
    #expect(differences.isEmpty, "\(differences.prefix(5))")
  }

  @Test("a truncated or corrupted zone file is not a zone, and never a crash")
  func corruptFiles() throws {
    let data = try #require(
      FileManager.default.contents(atPath: "/usr/share/zoneinfo/Europe/Berlin"))
    let bytes = [UInt8](data)
    for length in 0..<bytes.count {
      _ = CalendarTimeZone(identifier: "cut", tzif: Array(bytes.prefix(length)))
    }
    var random = SplitMix64(seed: 0xBAD)
    for _ in 0..<2000 {
      var corrupted = bytes
      for _ in 0..<random.next(in: 1...8) {
        corrupted[random.next(in: 0...corrupted.count - 1)] = UInt8(random.next(in: 0...255))
      }
      if let zone = CalendarTimeZone(identifier: "corrupt", tzif: corrupted) {
        _ = zone.offset(atSeconds: Int64(random.next(in: -3_000_000_000...5_000_000_000)))
      }
    }
    #expect(CalendarTimeZone(identifier: "whole", tzif: bytes) != nil)
  }

  @Test("a zone name outside the tz database, or escaping it, is not a zone")
  func rejectsUnknownNames() {
    #expect(CalendarTimeZone(identifier: "Nowhere/City") == nil)
    #expect(CalendarTimeZone(identifier: "../../etc/passwd") == nil)
    #expect(CalendarTimeZone(identifier: "/etc/localtime") == nil)
  }
}
