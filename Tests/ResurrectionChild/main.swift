// A child process for IntegrationTests/ResurrectionTests: it opens a store, lets a periodic
// task complete, schedules a one-time task for later, then starts a worker that blocks forever
// and prints "RUNNING" so that the parent can SIGKILL it mid-run.
import Backgrounder
import Foundation

guard CommandLine.arguments.count == 2 else {
  FileHandle.standardError.write(Data("usage: ResurrectionChild STORE_PATH\n".utf8))
  exit(2)
}

struct BlockingForever: Worker {
  func execute(_ context: WorkContext) async -> WorkResult {
    FileHandle.standardOutput.write(Data("RUNNING attempt=\(context.attempt)\n".utf8))
    while true { try? await Task.sleep(for: .seconds(3600)) }
  }
}

let blocking = try TaskId("test.resurrect.blocking")
let periodic = try TaskId("test.resurrect.periodic")
let later = try TaskId("test.resurrect.later")
let backgrounder = Backgrounder(storePath: CommandLine.arguments[1])
try backgrounder.register(blocking) { BlockingForever() }
try backgrounder.register(periodic) { ClosureWorker { _ in .success } }
try backgrounder.register(later) { ClosureWorker { _ in .success } }
let events = backgrounder.events()
try await backgrounder.start()
_ = await backgrounder.schedule(WorkRequest.Periodic(taskId: periodic, interval: .seconds(3600)))
for await event in events where event.taskId == periodic {
  if case .workCompleted = event.kind { break }
}
_ = await backgrounder.schedule(WorkRequest.OneTime(taskId: later, initialDelay: .seconds(3600)))
_ = await backgrounder.schedule(
  WorkRequest.OneTime(taskId: blocking, backoff: .linear(initialDelay: .seconds(20))))
while true { try await Task.sleep(for: .seconds(3600)) }
