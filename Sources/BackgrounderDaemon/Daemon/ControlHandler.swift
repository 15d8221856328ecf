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
      switch parse(id) {
      case .success(let taskId):
        let (ok, message) = await jobs.trigger(taskId)
        return ControlResponse(ok: ok, message: message)
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
      }
    case .schedule(let job):
      let (ok, message) = await jobs.schedule(job, origin: .cli)
      return ControlResponse(ok: ok, message: message)
    case .reload:
      await reload()
      return ControlResponse(ok: true, message: "reloaded")
    case .health:
      let diagnostics = runtime.diagnostics()
      return ControlResponse(
        ok: true,
        message: diagnostics.isHealthy ? "healthy" : "\(diagnostics.problems.count) problem(s)",
        problems: diagnostics.problems)
    }
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
