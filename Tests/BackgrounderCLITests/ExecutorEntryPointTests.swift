import ArgumentParser
import Glibc
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

  /// The root's help kept as text is what ArgumentParser renders at its width; else the test
  /// prints the text to put in `Sources/BackgrounderCLI/Commands/RootHelp.swift`.
  @Test("the root's help kept as text is the one rendered")
  func rootHelpIsRendered() {
    let rendered = BackgrounderCommand.helpMessage(columns: RootHelp.columns)
    #expect(
      RootHelp.text == rendered,
      "RootHelp.text is out of date; the rendered help is:\n\(rendered)")
  }

  @Test("help is rendered at the width ArgumentParser uses: COLUMNS, else the terminal's, else 80")
  func helpWidth() {
    #expect(RootHelp.screenWidth(columnsVariable: "132") == 132)
    // Not a number: the terminal's width, or 80 (the tests' output is no terminal in CI).
    let terminal = RootHelp.screenWidth(columnsVariable: nil)
    #expect(RootHelp.screenWidth(columnsVariable: "wide") == terminal)
    #expect(isatty(STDOUT_FILENO) == 1 || terminal == 80)
    #expect(
      BackgrounderCommand.plainHelp(["--help"], width: 132)
        == BackgrounderCommand.helpMessage(columns: 132))
    #expect(BackgrounderCommand.plainHelp(["--help"], width: 132) != RootHelp.text)
    #expect(BackgrounderCommand.plainHelp(["-h"], width: 80) == RootHelp.text)
  }
}
