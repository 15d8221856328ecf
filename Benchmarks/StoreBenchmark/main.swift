// StoreBenchmark: `swift run --package-path Benchmarks -c release StoreBenchmark [jobs] [options]`
//   jobs                     one-time no-op jobs (default 10,000)
//   --concurrency N[,N...]   concurrency limits of the throughput runs (default 4,256)
//   --durability D           full, normal or both (default both)
//   --skip-start             only the throughput runs
//
// 1. Throughput: N one-time no-op jobs scheduled (concurrently, so commits are grouped) and
//    completed with the durable store, for each concurrency limit and durability setting;
//    reports jobs/s, commits per job (with `durability: full` each commit is one fsync of the
//    WAL) and the share of wall time spent inside store write transactions. A claim must be
//    durable before its worker runs; one-time work is claimed ahead of free workers (up to
//    max(64, concurrency)), so one commit carries many claims even with 4 workers.
// 2. Start latency: time from `start()` to the first worker invocation with N persisted, due
//    tasks (target: ≤ 100 ms).
import Backgrounder
import BackgrounderTesting
import Foundation
import Synchronization

/// The command line: jobs, concurrency limits, durabilities, whether to measure start-up.
func parseArguments() -> (Int, [Int], [StoreDurability], Bool) {
  var jobs = 10_000
  var concurrencies = [4, 256]
  var durabilities: [StoreDurability] = [.full, .normal]
  var measuresStart = true
  var arguments = CommandLine.arguments.dropFirst().makeIterator()
  while let argument = arguments.next() {
    switch argument {
    case "--concurrency":
      concurrencies = (arguments.next() ?? "").split(separator: ",").compactMap { Int($0) }
    case "--durability":
      let value = arguments.next() ?? ""
      durabilities =
        value == "both" ? [.full, .normal] : StoreDurability(rawValue: value).map { [$0] } ?? []
    case "--skip-start": measuresStart = false
    default:
      guard let count = Int(argument), count > 0 else {
        FileHandle.standardError.write(Data("unknown option \(argument)\n".utf8))
        exit(2)
      }
      jobs = count
    }
  }
  guard !concurrencies.isEmpty, concurrencies.allSatisfy({ $0 > 0 }), !durabilities.isEmpty
  else {
    FileHandle.standardError.write(
      Data("--concurrency takes positive numbers, --durability full, normal or both\n".utf8))
    exit(2)
  }
  return (jobs, concurrencies, durabilities, measuresStart)
}

let (jobs, concurrencies, durabilities, measuresStart) = parseArguments()
let ids = (0..<jobs).map { try! TaskId("bench.job.n\($0)") }
let root = FileManager.default.temporaryDirectory.appendingPathComponent(
  "store-benchmark-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: root) }

func milliseconds(_ duration: Duration) -> Double {
  Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
}

func report(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func format(_ value: Double, _ digits: Int = 1) -> String {
  String(format: "%.\(digits)f", value)
}

/// Reports the instant of the first worker invocation.
final class Probe: Sendable {
  let (firstHit, continuation) = AsyncStream.makeStream(of: ContinuousClock.Instant.self)
  private let hits = Mutex(0)
  func hit() {
    let isFirst = hits.withLock { hits in
      hits += 1
      return hits == 1
    }
    if isFirst {
      continuation.yield(.now)
      continuation.finish()
    }
  }
}

func throughput(durability: StoreDurability, concurrency: Int) async throws {
  let path = root.appendingPathComponent("throughput-\(durability.rawValue).sqlite").path
  let backgrounder = Backgrounder(
    configuration: .init(storePath: path, concurrencyLimit: concurrency, durability: durability))
  try backgrounder.register(ids) { _ in ClosureWorker { _ in .success } }
  let events = backgrounder.events()
  try await backgrounder.start()
  let started = ContinuousClock.now
  let completion = Task {
    var completed = 0
    for await event in events {
      if case .workCompleted = event.kind {
        completed += 1
        if completed == jobs { return ContinuousClock.now }
      }
    }
    return ContinuousClock.now
  }
  let rejected = await withTaskGroup(of: Bool.self) { group in
    for id in ids {
      group.addTask { await backgrounder.schedule(WorkRequest.OneTime(taskId: id)) != .scheduled }
    }
    var rejected = 0
    for await failed in group where failed { rejected += 1 }
    return rejected
  }
  let scheduled = ContinuousClock.now
  let finished = await completion.value
  let diagnostics = backgrounder.diagnostics()
  await backgrounder.shutdown()
  let total = finished - started
  let storeShare = milliseconds(diagnostics.storeWriteTime) / milliseconds(total) * 100
  report(
    "throughput durability=\(durability.rawValue) concurrency=\(concurrency): "
      + "\(jobs) jobs scheduled in \(format(milliseconds(scheduled - started))) ms, "
      + "all completed in \(format(milliseconds(total))) ms = "
      + "\(format(Double(jobs) / (milliseconds(total) / 1000), 0)) jobs/s; "
      + "store: \(diagnostics.storeCommits) commits "
      + "(\(format(Double(diagnostics.storeCommits) / Double(jobs), 3)) per job), "
      + "\(diagnostics.storeOperations) ops, "
      + "\(format(milliseconds(diagnostics.storeWriteTime))) ms in write transactions "
      + "(\(format(storeShare))% of wall time); rejected \(rejected)")
}

/// A store holding `jobs` one-time tasks that are all due, written without running them (a
/// manual clock in the past that never advances).
func persistedStore() async throws -> String {
  let path = root.appendingPathComponent("persisted.sqlite").path
  let past = ManualClock(now: Date().addingTimeInterval(-3600))
  let backgrounder = Backgrounder(
    configuration: .init(storePath: path, clock: past, durability: .normal))
  try backgrounder.register(ids) { _ in ClosureWorker { _ in .success } }
  try await backgrounder.start()
  await withTaskGroup(of: Void.self) { group in
    for id in ids {
      group.addTask {
        _ = await backgrounder.schedule(WorkRequest.OneTime(taskId: id, initialDelay: .seconds(60)))
      }
    }
  }
  await backgrounder.shutdown()
  return path
}

func startLatency(template: String, run: Int) async throws -> (Double, Double) {
  let path = root.appendingPathComponent("start-\(run).sqlite").path
  try FileManager.default.copyItem(atPath: template, toPath: path)
  for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: template + suffix) {
    try FileManager.default.copyItem(atPath: template + suffix, toPath: path + suffix)
  }
  let probe = Probe()
  let backgrounder = Backgrounder(configuration: .init(storePath: path, durability: .full))
  try backgrounder.register(ids) { _ in
    ClosureWorker { _ in
      probe.hit()
      return .success
    }
  }
  let began = ContinuousClock.now
  try await backgrounder.start()
  let returned = ContinuousClock.now
  var iterator = probe.firstHit.makeAsyncIterator()
  let first = await iterator.next() ?? .now
  await backgrounder.shutdown()
  return (milliseconds(returned - began), milliseconds(first - began))
}

report("StoreBenchmark: \(jobs) jobs, store in \(root.path)")
for concurrency in concurrencies {
  for durability in durabilities {
    try await throughput(durability: durability, concurrency: concurrency)
  }
}
if measuresStart {
  let template = try await persistedStore()
  var returns: [Double] = []
  var firsts: [Double] = []
  for run in 0..<5 {
    let (returned, first) = try await startLatency(template: template, run: run)
    returns.append(returned)
    firsts.append(first)
  }
  report(
    "start with \(jobs) persisted due tasks (5 runs): start() returned in "
      + returns.map { format($0) }.joined(separator: ", ") + " ms; first dispatch after "
      + firsts.map { format($0) }.joined(separator: ", ") + " ms (median "
      + format(firsts.sorted()[2]) + " ms, target ≤ 100 ms)")
}
