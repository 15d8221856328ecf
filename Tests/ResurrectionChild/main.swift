// A child process for IntegrationTests/ResurrectionTests: it opens a store, lets a periodic
// task complete, schedules a one-time task for later, then starts a worker that blocks forever
// and prints "RUNNING" so that the parent can SIGKILL it mid-run.
import Backgrounder
import Foundation

// With `claim-ahead`: one worker slot, a blocking task in it and five one-time tasks claimed
// ahead of it; prints "CLAIMED" once all six claims are on disk.
guard CommandLine.arguments.count == 2 || CommandLine.arguments.dropFirst(2) == ["claim-ahead"]
else {
  FileHandle.standardError.write(Data("usage: ResurrectionChild STORE_PATH [claim-ahead]\n".utf8))
  exit(2)
}

struct BlockingForever: Worker {
  func execute(_ context: WorkContext) async -> WorkResult {
    FileHandle.standardOutput.write(Data("RUNNING attempt=\(context.attempt)\n".utf8))
    while true { try? await Task.sleep(for: .seconds(3600)) }
  }
}

if CommandLine.arguments.count == 3 {
  let blocker = try TaskId("test.ahead.blocker")
  let queued = try (0..<5).map { try TaskId("test.ahead.queued.n\($0)") }
  let backgrounder = Backgrounder(
    configuration: .init(storePath: CommandLine.arguments[1], concurrencyLimit: 1))
  try backgrounder.register(blocker) { BlockingForever() }
  try backgrounder.register(queued) { _ in ClosureWorker { _ in .success } }
  try await backgrounder.start()
  _ = await backgrounder.schedule(WorkRequest.OneTime(taskId: blocker))
  for id in queued { _ = await backgrounder.schedule(WorkRequest.OneTime(taskId: id)) }
  while try await backgrounder.storedTasks().filter({ $0.state == .running }).count < 6 {
    try await Task.sleep(for: .milliseconds(5))
  }
  FileHandle.standardOutput.write(Data("CLAIMED\n".utf8))
  while true { try await Task.sleep(for: .seconds(3600)) }
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
