import Backgrounder

/// What `trigger` answers: it waits for the triggered run to start, so that a run whose claim
/// the store could not record (disk full, read-only) is reported as not started. A start is
/// reported after `triggered`, what the trigger said (`triggered ID`, or that a finished
/// one-time job runs once more): the start used to replace it, so whether a user was told the
/// job had finished depended on whether its run started before the trigger asked.
enum TriggerReport {
  static func wait(
    for taskId: TaskId, triggered: String, in events: AsyncStream<MonitorEvent>,
    timeout: Duration
  ) async -> ControlResponse {
    let answer = await withTaskGroup(of: ControlResponse?.self) { group in
      group.addTask {
        for await event in events where event.taskId == taskId {
          switch event.kind {
          case .workStarted(let attempt):
            return ControlResponse(
              ok: true, message: "\(triggered): attempt \(attempt) started")
          case .libraryError(let message):
            return ControlResponse(ok: false, message: "\(taskId) was not started: \(message)")
          default: continue
          }
        }
        return nil
      }
      group.addTask {
        try? await Task.sleep(for: timeout)
        return nil
      }
      let first = await group.next() ?? nil
      group.cancelAll()
      return first
    }
    return answer
      ?? ControlResponse(
        ok: true, message: "\(triggered): it starts when a run slot is free")
  }
}
