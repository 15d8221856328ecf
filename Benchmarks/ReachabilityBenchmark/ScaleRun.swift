import BenchmarkSupport
import Foundation

/// The FIB-scale benchmark: the monitor's cost must not grow with the number of routes.
///
/// Namespace layout: veth0 (192.0.2.1/24, default route metric 100, primary), veth2
/// (198.51.100.1/24, a second default route is added and deleted: the "default-route change"),
/// veth4 (203.0.113.1/24, no default route: the "non-primary link"), and N non-default /32
/// routes via 192.0.2.254 loaded with `ip -batch`. With `floor`, the default-route changes are
/// first watched by that program (`Benchmarks/Peers/egress-lookup-floor.c`: the notification,
/// one lookup, one line) and `ip monitor` alone: the floor's CPU per change is what a watcher
/// that asks the kernel cannot go below.
struct ScaleRun {
  let backgrounder: String
  let floor: String?
  let routes: Int
  let churn: Int
  let defaultChanges: Int
  let linkDowns: Int

  func run() throws -> String {
    var report: [String] = []
    let empty = try BenchmarkNamespace.scale(routes: 0)
    defer { empty.remove() }
    let full = try BenchmarkNamespace.scale(routes: routes)
    defer { full.remove() }
    let bare = try startups(in: empty)
    let loaded = try startups(in: full)
    report.append(
      "start-up to first line, median of \(bare.count): no routes \(ms(median(bare.map(\.0)))), "
        + "\(routes) routes \(ms(median(loaded.map(\.0))))")
    report.append(
      "RSS after the first line: no routes \(median(bare.map(\.1))) kB, \(routes) routes "
        + "\(median(loaded.map(\.1))) kB (difference "
        + "\(median(loaded.map(\.1)) - median(bare.map(\.1))) kB)")

    if let floor { report.append(try floorChanges(full, floor: floor)) }
    let monitor = try WatchProcess(arguments: ["-n", full.name, "monitor", "route"])
    defer { monitor.stop() }
    // The JSON watcher is stopped before the text one starts: two watchers would share the
    // machine's cores with `ip monitor` and the changer, and each would slow the other's lines.
    do {
      let watch = try WatchProcess(executable: backgrounder, namespace: full.name)
      defer { watch.stop() }
      guard
        watch.waitForLine(after: 0, containing: "\"primary\":\"veth0\"", timeoutSeconds: 30)
          != nil
      else { throw BenchmarkError("no first line with primary veth0") }
      usleep(300_000)
      report.append(try routeChurn(full, watch))
      report.append(contentsOf: try defaultRouteChanges(full, watch, monitor, json: true))
      report.append(try nonPrimaryLinkDowns(full, watch))
    }
    let text = try WatchProcess(executable: backgrounder, namespace: full.name, json: false)
    defer { text.stop() }
    guard text.waitForLine(after: 0, containing: "reachable via veth0", timeoutSeconds: 30) != nil
    else { throw BenchmarkError("no first text line with veth0") }
    report.append(contentsOf: try defaultRouteChanges(full, text, monitor, json: false))
    return report.joined(separator: "\n")
  }

  /// Five `status --watch --json` starts: (ms to the first line, RSS kB 300 ms later).
  private func startups(in namespace: BenchmarkNamespace) throws -> [(Double, Int)] {
    try (0..<5).map { _ in
      let watch = try WatchProcess(executable: backgrounder, namespace: namespace.name)
      defer { watch.stop() }
      guard let (_, line) = watch.waitForLine(after: 0, containing: "reachable", timeoutSeconds: 30)
      else { throw BenchmarkError("no first line in \(namespace.name)") }
      usleep(300_000)
      return (
        Double(line.arrivedNanoseconds - watch.startedNanoseconds) / 1e6, watch.residentKilobytes
      )
    }
  }

  private func routeChurn(_ namespace: BenchmarkNamespace, _ watch: WatchProcess) throws -> String {
    let add = (0..<churn).map { "route add 172.16.\($0 / 256).\($0 % 256)/32 via 192.0.2.254" }
    let delete = (0..<churn).map { "route del 172.16.\($0 / 256).\($0 % 256)/32 via 192.0.2.254" }
    let lines = watch.count
    let before = watch.cpuSample()
    try namespace.batch(add)
    try namespace.batch(delete)
    usleep(500_000)
    let cpu = Double(watch.cpuNanoseconds(since: before))
    return "\(churn) non-default routes added + deleted: \(us(cpu / Double(2 * churn))) CPU per "
      + "route, \(watch.count - lines) lines printed"
  }

  private func defaultRouteChanges(
    _ namespace: BenchmarkNamespace, _ watch: WatchProcess, _ monitor: WatchProcess, json: Bool
  ) throws -> [String] {
    let changer = try RouteChanger(namespacePath: namespace.path)
    let index = try namespace.interfaceIndex("veth2")
    var ours: [Double] = []
    var theirs: [Double] = []
    let cpuBefore = (
      watch.cpuSample(), monitor.cpuSample(), watch.cpuSample(ofThreadsNamed: "bg-netlink")
    )
    for step in 0..<defaultChanges {
      let add = step % 2 == 0
      let (seen, seenMonitor) = (watch.count, monitor.count)
      let started = monotonicNanoseconds()
      try changer.defaultRoute(
        add: add, gateway: [198, 51, 100, 254], interfaceIndex: index, metric: 50)
      let link = add ? "veth2" : "veth0"
      let expected = json ? "\"primary\":\"\(link)\"" : "reachable via \(link)"
      guard let (_, line) = watch.waitForLine(after: seen, containing: expected) else {
        throw BenchmarkError(
          "no line with \(expected) after default-route change \(step + 1); lines since: "
            + watch.allLines[seen...].map(\.text).joined(separator: "\n"))
      }
      guard let (_, printed) = monitor.waitForLine(after: seenMonitor, containing: "198.51.100.254")
      else {
        throw BenchmarkError("ip monitor printed nothing after default-route change \(step + 1)")
      }
      ours.append(Double(line.arrivedNanoseconds - started) / 1000)
      theirs.append(Double(printed.arrivedNanoseconds - started) / 1000)
      usleep(2000)
    }
    let perChange = { (nanoseconds: UInt64) in us(Double(nanoseconds) / Double(defaultChanges)) }
    return [
      "default-route change (\(defaultChanges), \(routes) routes in the FIB), CPU per change: "
        + "`status --watch\(json ? " --json" : "")` "
        + "\(perChange(watch.cpuNanoseconds(since: cpuBefore.0))) (its netlink thread "
        + "\(perChange(watch.cpuNanoseconds(since: cpuBefore.2, ofThreadsNamed: "bg-netlink")))), "
        + "ip monitor \(perChange(monitor.cpuNanoseconds(since: cpuBefore.1)))",
      "  latency change -> line: backgrounder \(percentiles(ours)); ip monitor \(percentiles(theirs))",
    ]
  }

  /// The floor's and `ip monitor`'s CPU per default-route change, nothing else watching.
  private func floorChanges(_ namespace: BenchmarkNamespace, floor path: String) throws -> String {
    let floor = try WatchProcess(arguments: ["netns", "exec", namespace.name, path])
    defer { floor.stop() }
    let monitor = try WatchProcess(arguments: ["-n", namespace.name, "monitor", "route"])
    defer { monitor.stop() }
    usleep(300_000)
    let changer = try RouteChanger(namespacePath: namespace.path)
    let index = try namespace.interfaceIndex("veth2")
    let before = (floor.cpuSample(), monitor.cpuSample())
    for step in 0..<defaultChanges {
      let (seenFloor, seenMonitor) = (floor.count, monitor.count)
      try changer.defaultRoute(
        add: step % 2 == 0, gateway: [198, 51, 100, 254], interfaceIndex: index, metric: 50)
      guard floor.waitForLine(after: seenFloor, containing: "egress") != nil,
        monitor.waitForLine(after: seenMonitor, containing: "198.51.100.254") != nil
      else { throw BenchmarkError("no floor or ip monitor line after change \(step + 1)") }
      usleep(2000)
    }
    let perChange = { (nanoseconds: UInt64) in us(Double(nanoseconds) / Double(defaultChanges)) }
    return "egress-lookup floor alone (\(defaultChanges) default-route changes), CPU per change: "
      + "floor \(perChange(floor.cpuNanoseconds(since: before.0))), ip monitor "
      + "\(perChange(monitor.cpuNanoseconds(since: before.1)))"
  }

  private func nonPrimaryLinkDowns(_ namespace: BenchmarkNamespace, _ watch: WatchProcess) throws
    -> String
  {
    let changer = try RouteChanger(namespacePath: namespace.path)
    let index = try namespace.interfaceIndex("veth4")
    var cpu: UInt64 = 0
    for _ in 0..<linkDowns {
      let seen = watch.count
      let before = watch.cpuSample()
      try changer.link(index, up: false)
      guard watch.waitForLine(after: seen, containing: "veth4") != nil else {
        throw BenchmarkError("no line after veth4 went down")
      }
      usleep(20_000)  // let the peer's carrier loss arrive and be handled too
      cpu += watch.cpuNanoseconds(since: before)
      let again = watch.count
      try changer.link(index, up: true)
      _ = watch.waitForLine(after: again, containing: "veth4")
      usleep(20_000)
    }
    return "non-primary link down (\(linkDowns), \(routes) routes): "
      + "\(us(Double(cpu) / Double(linkDowns))) CPU each (the link and its peer's carrier loss)"
  }

  private func median<T: Comparable>(_ values: [T]) -> T { values.sorted()[values.count / 2] }
  private func ms(_ value: Double) -> String { String(format: "%.1f ms", value) }
  private func us(_ nanoseconds: Double) -> String { String(format: "%.1f µs", nanoseconds / 1000) }

  private func percentiles(_ microseconds: [Double]) -> String {
    let sorted = microseconds.sorted()
    let p = { (q: Double) in sorted[min(sorted.count - 1, Int(q * Double(sorted.count)))] }
    return String(format: "p50 %.0f µs, p99 %.0f µs", p(0.5), p(0.99))
  }
}

extension BenchmarkNamespace {
  /// A namespace for ``ScaleRun`` (see there for its layout) with `routes` non-default routes.
  static func scale(routes: Int) throws -> BenchmarkNamespace {
    var commands: [String] = []
    for (pair, address) in [(0, "192.0.2.1/24"), (2, "198.51.100.1/24"), (4, "203.0.113.1/24")] {
      commands += vethPair(pair, address: address)
    }
    commands.append("route add default via 192.0.2.254 dev veth0 metric 100")
    commands += (0..<routes).map {
      "route add 10.\($0 >> 16).\(($0 >> 8) & 255).\($0 & 255)/32 via 192.0.2.254"
    }
    return try create(name: "bgscale-\(getpid())-\(routes)", commands: commands)
  }
}
