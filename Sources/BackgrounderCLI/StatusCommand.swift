import ArgumentParser

/// `backgrounder status`: network, power and tasks.
struct StatusCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "status",
    abstract: "Show network, power and task status."
  )
}
