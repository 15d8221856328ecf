// The daemon with a stuck dispatch loop, for IntegrationTests' watchdog test: the test hook the
// shipped `backgrounder` binary does not have. Right after `READY=1` the dispatch loop blocks at
// the top of its next iteration, for good (the test kills this process), and prints
// "the dispatch loop is blocked" once it does.
//   StallingDaemon run --config PATH   (the command line the harness gives `backgrounder`)
import Backgrounder
import BackgrounderDaemon
import Foundation
import Locking
import Logging

let arguments = CommandLine.arguments
guard arguments.count == 4, arguments[1] == "run", arguments[2] == "--config" else {
  FileHandle.standardError.write(Data("usage: StallingDaemon run --config PATH\n".utf8))
  exit(2)
}
LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
let stalled = Lock(false)
var options = Daemon.Options(configPath: arguments[3])
options.dispatchLoopWillIterate = {
  guard stalled.withLock({ $0 }) else { return }
  FileHandle.standardError.write(Data("the dispatch loop is blocked\n".utf8))
  while true { try? await Task.sleep(for: .seconds(3600)) }
}
options.afterReady = { runtime in
  stalled.withLock { $0 = true }
  runtime.wakeDispatchLoop()
}
try await Daemon(options: options, logger: Logger(label: "backgrounder")).run()
