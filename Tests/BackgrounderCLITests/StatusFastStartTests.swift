import ArgumentParser
import Testing

@testable import BackgrounderCLI

/// ``StatusFastStart/plainCommand(_:)`` reads the plain `status` lines exactly as the argument
/// parser reads them, and leaves every other line to it.
@Suite struct StatusFastStartTests {
  /// The parsed values that `status` uses, comparable.
  private struct Values: Equatable {
    var json: Bool
    var wide: Bool
    var watch: Bool
    var sysfsRoot: String
    var replay: String?
    var config: String?
    var store: String?

    init(_ command: StatusCommand) {
      json = command.json
      wide = command.wide
      watch = command.watch
      sysfsRoot = command.sysfsRoot
      replay = command.replay
      config = command.config.config
      store = command.store
    }
  }

  @Test(
    "plain lines give what StatusCommand's parser gives",
    arguments: [
      [],
      ["--json"],
      ["--watch", "--json"],
      ["--wide"],
      ["--json", "--config", "/etc/bg.toml"],
      ["--config", "c.toml", "--store", "s.sqlite", "--sysfs-root", "/tmp/sys", "--json"],
      ["--replay", "capture.pcapng", "--watch"],
    ])
  func plainLinesMatchTheParser(arguments: [String]) throws {
    let plain = try #require(StatusFastStart.plainCommand(arguments[...]))
    let parsed = try #require(try StatusCommand.parseAsRoot(arguments) as? StatusCommand)
    #expect(Values(plain) == Values(parsed))
  }

  @Test(
    "anything else is left to the parser",
    arguments: [
      ["--help"],
      ["-h"],
      ["--json", "--json"],
      ["--config"],
      ["--config", "a.toml", "--config", "b.toml"],
      ["--config=a.toml"],
      ["--store", "--json"],
      ["--store", ""],
      ["--verbose"],
      ["extra"],
      ["--generate-completion-script", "bash"],
    ])
  func otherLinesAreNotReadHere(arguments: [String]) {
    #expect(StatusFastStart.plainCommand(arguments[...]) == nil)
  }

  @Test("a status that prints once runs without executor helper threads; a watch keeps them")
  func oneShotStatus() {
    #expect(
      ExecutorEntryPoint.isOneShotStatus(["backgrounder", "status", "--json", "--config", "c"]))
    #expect(ExecutorEntryPoint.isOneShotStatus(["backgrounder", "status"]))
    #expect(!ExecutorEntryPoint.isOneShotStatus(["backgrounder", "status", "--watch"]))
    #expect(!ExecutorEntryPoint.isOneShotStatus(["backgrounder", "status", "--json", "--watch"]))
    #expect(!ExecutorEntryPoint.isOneShotStatus(["backgrounder", "status", "--help"]))
    #expect(!ExecutorEntryPoint.isOneShotStatus(["backgrounder", "run"]))
  }
}
