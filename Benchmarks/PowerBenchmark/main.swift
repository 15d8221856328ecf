// Reaction time of PowerProbe: from a uevent handed to the probe to the changed PowerStatus
// arriving at a statusUpdates() subscriber. The sysfs tree is a temp copy of
// Fixtures/power_supply/laptop-discharging whose AC/online (and BAT0/status) flips each round.
//
//   swift run --package-path Benchmarks -c release PowerBenchmark [iterations]
//
// Mode "injected": datagrams through an in-process UeventSource (parser + probe + sysfs read).
// Mode "netlink" (root only): datagrams sent by a user-space socket to group 1 of a real
// NETLINK_KOBJECT_UEVENT socket in a private network namespace, i.e. plus the kernel's
// multicast delivery and the dispatch read source.
import Foundation
import Logging
import PowerSource

let iterations = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 500
let fixtures = URL(fileURLWithPath: #filePath)
  .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  .appendingPathComponent("Fixtures/power_supply").path
let logger = Logger(label: "PowerBenchmark") { _ in SwiftLogNoOpLogHandler() }

func uevent(_ name: String) throws -> [UInt8] {
  Array(try Data(contentsOf: URL(fileURLWithPath: fixtures + "/uevents/" + name)))
}

/// An in-process source: the benchmark yields datagrams directly.
final class InjectedSource: UeventSource {
  let stream: AsyncThrowingStream<UeventInput, any Error>
  let continuation: AsyncThrowingStream<UeventInput, any Error>.Continuation
  init() { (stream, continuation) = AsyncThrowingStream.makeStream() }
  func inputs() throws -> AsyncThrowingStream<UeventInput, any Error> { stream }
}

/// Runs `iterations` plug/unplug rounds; `deliver` hands one datagram to the probe.
func measure(
  source: any UeventSource, deliver: @escaping ([UInt8]) throws -> Void
) async throws -> [Duration] {
  let root = NSTemporaryDirectory() + "power-bench-\(UUID().uuidString)"
  try FileManager.default.copyItem(atPath: fixtures + "/laptop-discharging", toPath: root)
  defer { try? FileManager.default.removeItem(atPath: root) }
  func set(_ supply: String, _ attribute: String, _ value: String) throws {
    try (value + "\n").write(
      toFile: root + "/class/power_supply/\(supply)/\(attribute)", atomically: false,
      encoding: .utf8)
  }
  let probe = PowerProbe(
    sysfsRoot: root, logger: logger, batteryRereadInterval: .seconds(3600), uevents: source)
  var updates = probe.statusUpdates().makeAsyncIterator()
  let running = Task { try await probe.run() }
  defer { running.cancel() }
  _ = await updates.next()
  // The start-of-run read must not race the first round's file writes.
  while probe.counters.reads == 0 { try await Task.sleep(for: .milliseconds(1)) }
  let online = try uevent("ac-online.bin")
  let offline = try uevent("ac-offline.bin")
  let clock = ContinuousClock()
  var samples: [Duration] = []
  for round in 0..<(iterations + 20) {
    let plug = round % 2 == 0
    try set("AC", "online", plug ? "1" : "0")
    try set("BAT0", "status", plug ? "Charging" : "Discharging")
    let start = clock.now
    try deliver(plug ? online : offline)
    guard let status = await updates.next(), status.externalPower == plug else {
      throw BenchmarkError.unexpectedStatus(round: round, probe.status, probe.counters)
    }
    if round >= 20 { samples.append(start.duration(to: clock.now)) }  // 20 warm-up rounds
  }
  return samples
}

func report(_ mode: String, _ samples: [Duration]) {
  let sorted = samples.sorted()
  func microseconds(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    return String(format: "%.1f µs", Double(seconds) * 1e6 + Double(attoseconds) / 1e12)
  }
  let p50 = sorted[sorted.count / 2]
  let p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
  print(
    "\(mode): n=\(sorted.count) p50=\(microseconds(p50)) p99=\(microseconds(p99)) "
      + "max=\(microseconds(sorted.last!))")
}

let injected = InjectedSource()
report(
  "injected", try await measure(source: injected) { injected.continuation.yield(.datagram($0)) })

/// Runs the netlink mode inside a namespace that is deleted however the run ends.
func measureOverNetlink() async throws -> [Duration] {
  let namespace = "bgtest-powerbench-\(UInt32.random(in: 0...UInt32.max))"
  try NetlinkReplay.ip(["netns", "add", namespace])
  defer { try? NetlinkReplay.ip(["netns", "delete", namespace]) }
  let replay = try NetlinkReplay(namespace: namespace)
  return try await measure(source: replay.receiver) { try replay.send($0) }
}

enum BenchmarkError: Error {
  case unexpectedStatus(round: Int, PowerStatus, PowerProbeCounters)
}

if getuid() == 0 {
  report("netlink", try await measureOverNetlink())
} else {
  print("netlink: skipped (needs root for a private network namespace)")
}
