import BackgrounderDaemon
import Locking
import PowerSource
import Reachability

/// The printing side of `status --watch`: one line per network, power or task change, whole
/// and in the order the changes were taken in. Network changes arrive on the monitor's own
/// thread (``ReachabilityMonitor/observeStatus(_:)``), so a line leaves the process without a
/// hand-off to another thread; power and task changes come from their streams. Nothing is
/// printed for network or power until a network status with every source answered (or timed
/// out, or known absent): the first line is as true as one-shot `status`.
/// The daemon, tasks and health sections are read again only when they can have changed
/// (``WatchSections``).
final class StatusWatch: Sendable {
  private struct State {
    var network: NetworkStatus?
    /// A settled status was printed: later lines follow every change.
    var printedNetwork = false
    var power: PowerStatus
    var encoder = StatusLineEncoder()
    var sections: WatchSections
  }

  private let printer: StatusPrinter
  private let state: Lock<State>

  init(printer: StatusPrinter, power: PowerStatus) {
    self.printer = printer
    state = Lock(State(power: power, sections: WatchSections(printer: printer)))
  }

  func networkChanged(_ status: NetworkStatus) {
    state.withLock { state in
      state.network = status
      print(&state)
    }
  }

  func powerChanged(_ status: PowerStatus) {
    state.withLock { state in
      state.power = status
      print(&state)
    }
  }

  func taskChanged(_ change: TaskChange) {
    state.withLock { state in
      state.sections.taskChanged()
      report { try printer.emit(change, observedAt: NetworkTimestamp.nowMicroseconds()) }
    }
  }

  /// The daemon stopped (its task-change stream ended) or answers again: one line saying so,
  /// `TIME daemon stopped: …` / `TIME daemon answers again: …`, or in JSON
  /// `{"observedAt": …, "daemonChange": "stopped"}` (`"reconnected"`). Network and power lines
  /// go on meanwhile; `missed` (runs recorded while no stream was connected) follow.
  func daemonChanged(connected: Bool, missed: [TaskChange] = []) {
    state.withLock { state in
      state.sections.setFollowsDaemon(connected)
      let microseconds = NetworkTimestamp.nowMicroseconds()
      report {
        if printer.json {
          Output.line(
            try Output.json(
              DaemonChangeLine(
                observedAt: NetworkTimestamp.rfc3339(microseconds: microseconds),
                daemonChange: connected ? "reconnected" : "stopped")))
        } else {
          let observedAt = NetworkTimestamp.rfc3339(microseconds: microseconds)
          Output.line(
            connected
              ? "\(observedAt) daemon answers again: task changes resume"
              : "\(observedAt) daemon stopped: network and power lines go on, task changes "
                + "resume when it answers again")
        }
      }
      for change in missed {
        report { try printer.emit(change, observedAt: microseconds) }
      }
    }
  }

  /// The daemon's task-change stream was connected (`true`) or ended (`false`).
  func followsDaemon(_ follows: Bool) {
    state.withLock { $0.sections.setFollowsDaemon(follows) }
  }

  /// Writes the line for the current state, under the lock so that lines stay whole and in
  /// order.
  private func print(_ state: inout State) {
    guard let network = state.network, network.isSettled || state.printedNetwork else { return }
    state.printedNetwork = true
    report {
      Output.line(
        bytes: try printer.watchLine(
          network: network, power: state.power, observedAt: NetworkTimestamp.nowMicroseconds(),
          encoder: &state.encoder, sections: &state.sections))
    }
  }

  /// A line that cannot be encoded (a value JSON cannot express) is reported on stderr; the
  /// watch goes on.
  private func report(_ body: () throws -> Void) {
    do { try body() } catch { Output.error("cannot print a status line: \(error)") }
  }
}

/// A `status --watch --json` line saying the daemon stopped or answers again.
struct DaemonChangeLine: Encodable {
  var observedAt: String
  var daemonChange: String
}
