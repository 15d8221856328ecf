import ArgumentParser

/// `backgrounder capture`: record rtnetlink messages as pcap.
struct CaptureCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "capture",
    abstract: "Record the rtnetlink messages the monitor sees as a pcap file."
  )
}
