import ArgumentParser
import Testing

@testable import BackgrounderCLI

/// The entry point's written-out verb lists agree with the command types they stand for.
@Suite struct ExecutorEntryPointTests {
  @Test("the asynchronous verbs are exactly the subcommands that are AsyncParsableCommands")
  func asyncVerbsMatchTheCommandTypes() {
    let asynchronous = BackgrounderCommand.configuration.subcommands.compactMap { command in
      command is AsyncParsableCommand.Type ? command.configuration.commandName : nil
    }
    #expect(Set(ExecutorEntryPoint.asyncVerbs) == Set(asynchronous))
    #expect(ExecutorEntryPoint.asyncVerbs.count == Set(ExecutorEntryPoint.asyncVerbs).count)
    #expect(ExecutorEntryPoint.quietVerbs.allSatisfy(ExecutorEntryPoint.asyncVerbs.contains))
    // The plain `calendar` and `status` lines are recognized by these names.
    #expect(CalendarCommand.configuration.commandName == "calendar")
    #expect(StatusCommand.configuration.commandName == "status")
    #expect(!ExecutorEntryPoint.asyncVerbs.contains("calendar"))
  }

  /// `--help`, `-h` and `help` alone print the root's help without parsing: the same text
  /// parsing prints (its help request's message), and exit 0; anything more is parsed.
  @Test("the root's help without parsing is what parsing prints")
  func plainHelpIsTheParsersHelp() throws {
    for arguments in [["--help"], ["-h"], ["help"]] {
      let plain = try #require(BackgrounderCommand.plainHelp(arguments), "\(arguments)")
      // Parsing gives ArgumentParser's help command, whose run ends with the help request.
      var command = try BackgrounderCommand.parseAsRoot(arguments)
      do {
        try command.run()
        Issue.record("\(arguments) ran as a command")
      } catch {
        #expect(BackgrounderCommand.exitCode(for: error) == .success)
        #expect(plain == BackgrounderCommand.fullMessage(for: error), "\(arguments)")
      }
    }
    for arguments in [
      ["--help", "status"], ["status", "--help"], ["help", "status"], ["--version"],
    ] {
      #expect(BackgrounderCommand.plainHelp(arguments) == nil, "\(arguments)")
    }
  }
}
