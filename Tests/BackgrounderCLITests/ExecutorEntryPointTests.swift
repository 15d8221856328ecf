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
}
