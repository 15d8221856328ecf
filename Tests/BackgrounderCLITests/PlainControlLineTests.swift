import ArgumentParser
import Testing

@testable import BackgrounderCLI

/// ``PlainControlLine`` reads plain `trigger` and `expire` lines as the argument parser reads
/// them, and leaves every other line to it.
@Suite struct PlainControlLineTests {
  @Test(
    "plain lines give what the parser gives",
    arguments: [
      ["dev.example.tick"],
      ["dev.example.tick", "--config", "/etc/bg.toml"],
      ["--config", "/etc/bg.toml", "dev.example.tick"],
      ["x"],
    ])
  func plainLinesMatchTheParser(arguments: [String]) throws {
    let plain = try #require(PlainControlLine.parse(arguments[...]))
    let trigger = try #require(try TriggerCommand.parseAsRoot(arguments) as? TriggerCommand)
    #expect(plain == PlainControlLine(id: trigger.job.id, config: trigger.config.config))
    let expire = try #require(try ExpireCommand.parseAsRoot(arguments) as? ExpireCommand)
    #expect(plain == PlainControlLine(id: expire.job.id, config: expire.config.config))
  }

  @Test(
    "anything else is left to the parser",
    arguments: [
      [],
      ["--help"],
      ["-h"],
      ["a", "b"],
      ["a", "--config"],
      ["a", "--config", "x", "--config", "y"],
      ["a", "--config=x"],
      ["a", "--config", "-x"],
      ["-", "a"],
      ["--", "a"],
      ["a", "--verbose"],
      [""],
    ])
  func otherLinesAreNotReadHere(arguments: [String]) {
    #expect(PlainControlLine.parse(arguments[...]) == nil)
  }
}
