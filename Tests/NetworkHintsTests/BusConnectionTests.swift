import DBus
import SystemPackage
import Testing

/// `BusConnection`'s failures carry sd-bus's errno (one error type with the errno, not a
/// string of it).
@Suite struct BusConnectionTests {
  @Test func aBusThatIsNotThereIsAnErrnoNamingTheAddress() {
    let address = "unix:path=/nonexistent-backgrounder-test/bus"
    do {
      _ = try BusConnection(address: address)
      Issue.record("connected to \(address)")
    } catch {
      #expect(error.errno == .noSuchFileOrDirectory, "\(error)")
      #expect(error.description.hasPrefix("connect to \(address): "), "\(error)")
      #expect(error.name == nil)
    }
  }
}
