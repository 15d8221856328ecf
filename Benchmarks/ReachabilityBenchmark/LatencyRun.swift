import BenchmarkSupport
import Foundation

/// Alternates route additions, deletions and link-down events and times each until the
/// matching `status --watch --json` line arrives.
struct LatencyRun {
  let namespace: BenchmarkNamespace
  let backgrounder: String

  /// Microseconds per change, by kind of change.
  func measure(_ changes: Int) throws -> [String: [Double]] {
    let changer = try RouteChanger(namespacePath: namespace.path)
    let watch = try WatchProcess(executable: backgrounder, namespace: namespace.name)
    defer { watch.stop() }
    guard watch.waitForLine(after: 0, containing: "\"reachable\":false", timeoutSeconds: 30) != nil
    else { throw BenchmarkError("no initial status line from \(backgrounder)") }
    let index = try namespace.interfaceIndex("veth0")
    let gateway: [UInt8] = [192, 0, 2, 254]
    var latencies: [String: [Double]] = [:]
    var measured = 0
    var step = 0
    while measured < changes {
      let seen = watch.count
      let started = monotonicNanoseconds()
      let expectReachable: Bool
      let kind: String
      switch step % 4 {
      case 0, 2:
        try changer.defaultRoute(add: true, gateway: gateway, interfaceIndex: index)
        (expectReachable, kind) = (true, "route add")
      case 1:
        try changer.defaultRoute(add: false, gateway: gateway, interfaceIndex: index)
        (expectReachable, kind) = (false, "route del")
      default:
        try changer.link(index, up: false)  // the kernel drops the IPv4 route silently
        (expectReachable, kind) = (false, "link down")
      }
      guard
        let (_, line) = watch.waitForLine(
          after: seen, containing: "\"reachable\":\(expectReachable)")
      else { throw BenchmarkError("no status line after change \(measured + 1)") }
      latencies[kind, default: []].append(Double(line.arrivedNanoseconds - started) / 1000)
      measured += 1
      if step % 4 == 3 { try changer.link(index, up: true) }
      step += 1
      usleep(2000)  // let follow-up lines (re-dumps, carrier) settle before the next change
    }
    return latencies
  }

  static func report(_ latencies: [String: [Double]]) -> String {
    var lines = [summary("all changes", latencies.values.flatMap { $0 })]
    for (kind, values) in latencies.sorted(by: { $0.key < $1.key }) {
      lines.append(summary(kind, values))
    }
    return "change -> `status --watch --json` line received:\n" + lines.joined(separator: "\n")
  }

  private static func summary(_ label: String, _ microseconds: [Double]) -> String {
    let sorted = microseconds.sorted()
    func percentile(_ p: Double) -> Double {
      sorted[min(sorted.count - 1, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1)]
    }
    func format(_ value: Double) -> String { String(format: "%.1f µs", value) }
    return "  \(label): n=\(sorted.count) p50 \(format(percentile(50))) "
      + "p99 \(format(percentile(99))) max \(format(sorted.last ?? 0))"
  }
}
