import BackgrounderDaemon
import Foundation
import Testing

@Suite struct DefaultLocationsTests {
  @Test func rootUsesRunOrTheServiceRuntimeDirectory() {
    #expect(
      DefaultLocations.current(userID: 0, environment: [:]).controlSocketPath
        == "/run/backgrounder/control.sock")
    #expect(
      DefaultLocations.current(userID: 0, environment: ["RUNTIME_DIRECTORY": "/run/bg:/run/x"])
        .controlSocketPath == "/run/bg/control.sock")
  }

  @Test func aUserWithoutRuntimeDirectoryGetsTheStateDirectoryNeverTmp() {
    let locations = DefaultLocations.current(
      userID: 1000, environment: ["HOME": "/home/me"])
    #expect(locations.controlSocketPath == "/home/me/.local/state/backgrounder/control.sock")
    #expect(locations.storePath == "/home/me/.local/state/backgrounder/state.sqlite")
    let xdg = DefaultLocations.current(
      userID: 1000, environment: ["HOME": "/home/me", "XDG_RUNTIME_DIR": "/run/user/1000"])
    #expect(xdg.controlSocketPath == "/run/user/1000/backgrounder/control.sock")
  }

  @Test func withoutHomeThePasswordDatabaseIsUsed() {
    // uid 65534 (nobody) has an entry on Debian-like systems; no path may fall back to /tmp.
    let locations = DefaultLocations.current(userID: 65534, environment: [:])
    #expect(!locations.controlSocketPath.hasPrefix("/tmp"))
    #expect(!locations.storePath.hasPrefix("/tmp"))
  }

  @Test("this process's locations read the same variables as its whole environment gives")
  func currentReadsTheProcessEnvironment() {
    #expect(
      DefaultLocations.current() == .current(environment: ProcessInfo.processInfo.environment))
    #expect(
      DefaultLocations.current(userID: 1000)
        == .current(userID: 1000, environment: ProcessInfo.processInfo.environment))
  }
}
