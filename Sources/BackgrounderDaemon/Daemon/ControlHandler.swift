import Backgrounder
import Foundation
import Logind
import Reachability

/// Carries out control-socket requests against the running daemon. A verb answers `ok` only
/// when its change took effect: a change the store could not record is reported as a failure.
struct ControlHandler: Sendable {
  let runtime: Backgrounder
  let jobs: JobSynchronizer
  let reload: @Sendable () async -> Void
  /// The condition sources' own problems (a hint source timed out or gone).
  var sourceProblems: @Sendable () -> [HealthProblem] = { [] }
  /// The monitor's hints (NetworkManager, nl80211, probe), for `status`.
  var hints: @Sendable () -> LinkHints? = { nil }
  /// The runs' systemd-logind locks, for `status`.
  var inhibitor: SleepInhibitor?
  /// Whether wake alarms can be armed, for `status`.
  var wakeAlarms: WakeAlarms?
  /// The daemon's network and power view, for `status`.
  var view: @Sendable () -> DaemonView? = { nil }
  /// The daemon's `[network] metered-budget` and its use, for `status`.
  var meteredBudget: @Sendable () -> MeteredBudgetReport? = { nil }
  /// How runs' bytes are counted, for `status` and `doctor`.
  var runBytes: RunBytesChoice?
  /// When the daemon started serving (for `ping`).
  let startedAt = Date()
  /// How long `trigger` waits for the run to start before answering that it is pending.
  var startTimeout: Duration = .seconds(10)

  func handle(_ request: ControlRequest) async -> ControlResponse {
    switch request {
    case .ping:
      return ControlResponse(ok: true, message: "pong", daemon: info)
    case .trigger(let id):
      switch parse(id) {
      case .success(let taskId):
        // Subscribed before triggering, so that the start (or its failure) cannot be missed.
        let events = runtime.events()
        let outcome = await jobs.trigger(taskId)
        guard outcome.triggered else {
          return ControlResponse(ok: outcome.ok, message: outcome.message)
        }
        return await TriggerReport.wait(
          for: taskId, triggered: outcome.message, in: events, timeout: startTimeout)
      case .failure(let refusal):
        return refusal.response
      }
    case .expire(let id):
      return withTaskId(id) { taskId in
        runtime.expire(taskId)
          ? ControlResponse(ok: true, message: "expired the running attempt of \(id)")
          : ControlResponse(ok: false, message: "\(id) is not running")
      }
    case .cancel(let id):
      let taskId: TaskId
      switch parse(id) {
      case .success(let parsed): taskId = parsed
      case .failure(let refusal): return refusal.response
      }
      return switch await runtime.cancel(taskId) {
      case .cancelled: ControlResponse(ok: true, message: "cancelled \(id)")
      case .noSuchTask: ControlResponse(ok: false, message: "no such job: \(id)")
      case .storeFailure(let why):
        ControlResponse(ok: false, message: "cancel of \(id) was not saved: \(why)")
      }
    case .schedule(let job):
      let (ok, message) = await jobs.schedule(job, origin: .cli)
      return ControlResponse(ok: ok, message: message)
    case .reload:
      await reload()
      return ControlResponse(ok: true, message: "reloaded")
    case .health:
      let problems = runtime.diagnostics().problems + sourceProblems()
      return ControlResponse(
        ok: true,
        message: problems.isEmpty ? "healthy" : "\(problems.count) problem(s)",
        // Who answered, as for `ping`: `status` asks once for both.
        problems: problems, daemon: info, hints: hints())
    case .watch:
      // Streams are served by the control server itself (`ControlServer.Changes`).
      return ControlResponse(ok: false, message: "watch needs a streaming connection")
    }
  }

  private var info: DaemonInfo {
    let diagnostics = runtime.diagnostics()
    var info = DaemonInfo(
      pid: getpid(), since: ISO8601DateFormatter().string(from: startedAt),
      version: DaemonInfo.version, storePath: diagnostics.storePath,
      storeError: diagnostics.lastStoreError, inhibitors: inhibitor?.info,
      wakeAlarms: wakeAlarms?.availability.availability,
      wakeAlarmsReason: wakeAlarms?.availability.reason)
    info.view = view()
    info.meteredBudget = meteredBudget()
    info.runBytes = runBytes
    return info
  }

  private func withTaskId(_ id: String, _ body: (TaskId) -> ControlResponse) -> ControlResponse {
    switch parse(id) {
    case .success(let taskId): body(taskId)
    case .failure(let refusal): refusal.response
    }
  }

  /// The task id, or the answer explaining why `id` is not one.
  private func parse(_ id: String) -> Result<TaskId, Refusal> {
    do {
      return .success(try TaskId(id))
    } catch {
      return .failure(
        Refusal(response: ControlResponse(ok: false, message: "invalid job id \"\(id)\": \(error)"))
      )
    }
  }

  /// A request refused before it reached the runtime.
  private struct Refusal: Error {
    let response: ControlResponse
  }
}
