import DBus
import Foundation
import SystemCalls
import SystemPackage
import Testing

/// `BusConnection`'s failures carry sd-bus's errno as a `SystemCallError` naming the operation
/// (the one error type with an errno, not a string of it).
@Suite struct BusConnectionTests {
  @Test func aBusThatIsNotThereIsAnErrnoNamingTheAddress() {
    let address = "unix:path=/nonexistent-backgrounder-test/bus"
    do {
      _ = try BusConnection(address: address)
      Issue.record("connected to \(address)")
    } catch {
      #expect(error.errno == .noSuchFileOrDirectory, "\(error)")
      #expect(
        error.systemCall
          == SystemCallError("connect to \(address)", errno: .noSuchFileOrDirectory))
      #expect(error.description == error.systemCall?.description, "\(error)")
      #expect(error.description.hasPrefix("connect to \(address): "), "\(error)")
      #expect(error.name == nil)
    }
  }
}

/// Where no system bus can be (no `DBUS_SYSTEM_BUS_ADDRESS`, nothing at sd-bus's default
/// socket), the connection fails as sd-bus would, without opening libsystemd for it.
@Suite struct SystemBusAbsenceTests {
  @Test func absentOnlyWithoutAnAddressAndWithNothingAtTheSocket() throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("bus-absence-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let socket = directory + "/system_bus_socket"
    let unset: (String) -> String? = { _ in nil }
    #expect(BusConnection.systemBusIsAbsent(environment: unset, socket: socket))
    // An address in the environment: sd-bus decides.
    let set: (String) -> String? = { $0 == "DBUS_SYSTEM_BUS_ADDRESS" ? "unix:path=/x" : nil }
    #expect(!BusConnection.systemBusIsAbsent(environment: set, socket: socket))
    // Something at the path (even a stale file): sd-bus decides.
    #expect(FileManager.default.createFile(atPath: socket, contents: nil))
    #expect(!BusConnection.systemBusIsAbsent(environment: unset, socket: socket))
  }
}
