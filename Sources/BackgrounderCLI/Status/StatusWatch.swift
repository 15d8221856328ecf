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
    /// The followed daemon's view when it can differ from ours
    /// (``DaemonSection/isElsewhere(_:)``): the lines show it instead of ours.
    var daemonView: DaemonView?
    /// A daemon elsewhere stopped: our own lines say they are ours until it answers again.
    var daemonAway = false
    /// A status line was printed.
    var printedAny = false
    /// Daemon changes before the first status line, printed after it.
    var heldDaemonChanges: [HeldDaemonChange] = []
  }

  private let printer: StatusPrinter
  private let state: Lock<State>

  init(printer: StatusPrinter, power: PowerStatus) {
    self.printer = printer
    state = Lock(State(power: power, sections: WatchSections(printer: printer)))
  }

  /// Our own network changed: a line, unless the daemon's view is shown.
  func networkChanged(_ status: NetworkStatus) {
    state.withLock { state in
      state.network = status
      if state.daemonView == nil { print(&state) }
    }
  }

  /// Our own power changed: a line, unless the daemon's view is shown.
  func powerChanged(_ status: PowerStatus) {
    state.withLock { state in
      state.power = status
      if state.daemonView == nil { print(&state) }
    }
  }

  /// The daemon pushed its view (a ``TaskChange/Kind/network`` change): shown, and a line,
  /// when it can differ from ours and changed; else our own lines go on.
  func daemonViewChanged(_ view: DaemonView?) {
    state.withLock { state in
      let shown = view.flatMap { DaemonSection.isElsewhere($0) ? $0 : nil }
      if view != nil { state.daemonAway = false }  // it answers
      guard shown != state.daemonView else { return }
      state.daemonView = shown
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
  /// go on meanwhile; `missed` (runs recorded while no stream was connected) follow. Before the
  /// first status line (a watch started while its daemon restarts sees the old one stop) the
  /// line waits for it: the first line is a status as true as one-shot `status`.
  func daemonChanged(connected: Bool, missed: [TaskChange] = []) {
    state.withLock { state in
      state.sections.setFollowsDaemon(connected)
      // Away, the daemon's last view is no longer known: our own, labelled as ours.
      let fallsBack = !connected && state.daemonView != nil
      if fallsBack {
        state.daemonView = nil
        state.daemonAway = true
      }
      let change = HeldDaemonChange(
        connected: connected, microseconds: NetworkTimestamp.nowMicroseconds(),
        fallsBack: fallsBack, missed: missed)
      if state.printedAny {
        emit(change)
      } else {
        state.heldDaemonChanges.append(change)
      }
      if fallsBack { print(&state) }
    }
  }

  /// A daemon change's line, and the runs it missed.
  private func emit(_ change: HeldDaemonChange) {
    report {
      let observedAt = NetworkTimestamp.rfc3339(microseconds: change.microseconds)
      if printer.json {
        Output.line(
          try Output.json(
            DaemonChangeLine(
              observedAt: observedAt,
              daemonChange: change.connected ? "reconnected" : "stopped")))
      } else {
        Output.line(
          change.connected
            ? "\(observedAt) daemon answers again: task changes resume"
            : "\(observedAt) daemon stopped: network and power lines go on, task changes "
              + "resume when it answers again"
              + (change.fallsBack ? "; this process's own view is shown until then" : ""))
      }
    }
    for missed in change.missed {
      report { try printer.emit(missed, observedAt: change.microseconds) }
    }
  }

  /// The daemon's task-change stream was connected (`true`) or ended (`false`).
  func followsDaemon(_ follows: Bool) {
    state.withLock { $0.sections.setFollowsDaemon(follows) }
  }

  /// Writes the line for the current state, under the lock so that lines stay whole and in
  /// order.
  private func print(_ state: inout State) {
    // The daemon's view needs nothing of ours (our monitor may not have answered yet).
    let network: NetworkStatus
    if let known = state.network, known.isSettled || state.printedNetwork {
      network = known
      state.printedNetwork = true
    } else if state.daemonView != nil {
      network = state.network ?? .unknown
    } else {
      return
    }
    report {
      Output.line(
        bytes: try printer.watchLine(
          network: network, power: state.power, observedAt: NetworkTimestamp.nowMicroseconds(),
          encoder: &state.encoder, sections: &state.sections, daemonView: state.daemonView,
          ownLabel: state.daemonAway ? "own view (the daemon is away):" : nil))
    }
    if !state.printedAny {
      state.printedAny = true
      for change in state.heldDaemonChanges { emit(change) }
      state.heldDaemonChanges = []
    }
  }

  /// A line that cannot be encoded (a value JSON cannot express) is reported on stderr; the
  /// watch goes on.
  private func report(_ body: () throws -> Void) {
    do { try body() } catch { Output.error("cannot print a status line: \(error)") }
  }
}

/// A daemon change as it happened, its line printed then or after the first status line.
struct HeldDaemonChange: Sendable {
  var connected: Bool
  var microseconds: Int64
  var fallsBack: Bool
  var missed: [TaskChange]
}

/// A `status --watch --json` line saying the daemon stopped or answers again.
struct DaemonChangeLine: Encodable {
  var observedAt: String
  var daemonChange: String
}
