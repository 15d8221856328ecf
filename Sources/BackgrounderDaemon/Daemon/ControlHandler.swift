import Backgrounder

/// Carries out control-socket requests against the running daemon.
struct ControlHandler: Sendable {
  let runtime: Backgrounder
  let jobs: JobSynchronizer
  let reload: @Sendable () async -> Void

  func handle(_ request: ControlRequest) async -> ControlResponse {
    switch request {
    case .ping:
      return ControlResponse(ok: true, message: "pong")
    case .trigger(let id):
      return withTaskId(id) { taskId in
        switch runtime.runNow(taskId) {
        case .triggered: ControlResponse(ok: true, message: "triggered \(id)")
        case .alreadyRunning: ControlResponse(ok: true, message: "\(id) is already running")
        case .noSuchTask: ControlResponse(ok: false, message: "no such job: \(id)")
        case .notRunning: ControlResponse(ok: false, message: "the daemon is shutting down")
        }
      }
    case .expire(let id):
      return withTaskId(id) { taskId in
        runtime.expire(taskId)
          ? ControlResponse(ok: true, message: "expired the running attempt of \(id)")
          : ControlResponse(ok: false, message: "\(id) is not running")
      }
    case .cancel(let id):
      guard let taskId = try? TaskId(id) else { return invalid(id) }
      return switch await runtime.cancel(taskId) {
      case .cancelled: ControlResponse(ok: true, message: "cancelled \(id)")
      case .noSuchTask: ControlResponse(ok: false, message: "no such job: \(id)")
      }
    case .schedule(let job):
      let (ok, message) = await jobs.schedule(job, origin: .cli)
      return ControlResponse(ok: ok, message: message)
    case .reload:
      await reload()
      return ControlResponse(ok: true, message: "reloaded")
    }
  }

  private func withTaskId(_ id: String, _ body: (TaskId) -> ControlResponse) -> ControlResponse {
    guard let taskId = try? TaskId(id) else { return invalid(id) }
    return body(taskId)
  }

  private func invalid(_ id: String) -> ControlResponse {
    do {
      _ = try TaskId(id)
      return ControlResponse(ok: false, message: "invalid job id \"\(id)\"")
    } catch {
      return ControlResponse(ok: false, message: "invalid job id \"\(id)\": \(error)")
    }
  }
}
