import Backgrounder
import Foundation

/// `[daemon] start-splay = "2m"`: after the daemon starts and after each resume from suspend,
/// the runs that became due meanwhile start spread over this time, each at an offset fixed by
/// the machine id and the job id (as `fixed-random-delay`), still within `max-concurrent`.
/// `"0"` turns it off.
package enum StartSplayKey {
  static let key = "start-splay"
  /// On by default, 2 minutes: after a resume the Wi-Fi reconnects and the desktop comes back
  /// within the first minute or so, and a rush of catch-up runs then stalls the machine just
  /// when the user returns to it (systemd #43350); spread over 2 minutes, a dozen jobs start
  /// about 10 s apart, while no run is noticeably late for jobs whose periods are hours or
  /// days.
  package static let defaultValue: Duration = .seconds(120)
  /// The longest splay accepted.
  package static let maximum: Duration = .seconds(3600)

  static func read(_ daemon: TableReader) throws(ConfigurationError) -> Duration? {
    guard let text = try daemon.string(key) else { return nil }
    if text.trimmingCharacters(in: .whitespaces) == "0" { return .zero }
    guard let splay = try daemon.duration(key) else { return nil }
    guard splay <= maximum else {
      throw daemon.error(key, "must be at most 1h (\"0\" turns it off), got \(text)")
    }
    return splay
  }

  /// The runtime's splay for `over`, its offsets fixed by this machine's id; nil when off. A
  /// machine without a readable id spreads by the job ids alone.
  static func runtimeSplay(
    _ over: Duration, machineIdPath: String = MachineIdentity.defaultPath
  ) -> StartSplay? {
    guard over > .zero else { return nil }
    let machineId = (try? MachineIdentity.read(path: machineIdPath)) ?? ""
    return StartSplay(over: over, machineId: machineId)
  }
}
