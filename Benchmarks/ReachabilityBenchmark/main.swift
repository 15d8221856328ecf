import BenchmarkSupport
import Foundation

// Reachability benchmark. Run as root, from the repository root:
//   swift run --package-path Benchmarks -c release ReachabilityBenchmark [options]
//   --changes N            measured changes (default 240)
//   --backgrounder PATH    binary to watch (default .build/release/backgrounder)
//   --idle-seconds S       then strace an idle `status --watch` and `status --watch --json` for
//                          S seconds each (default 60; 0 = skip)
//   --scale ROUTES         instead: the FIB-scale run (see ScaleRun.swift) with ROUTES
//                          non-default routes (e.g. 100000)
//   --floor PATH           with --scale: first time PATH (Benchmarks/Peers/egress-lookup-floor.c,
//                          compiled) alone with ip monitor over the default-route changes
// Latency: from just before the rtnetlink request (sent on our own socket, ACK awaited) that makes
// the change, to the moment the matching `status --watch --json` line reaches this process.

var changes = 240
var backgrounder = ".build/release/backgrounder"
var idleSeconds = 60
var scaleRoutes: Int?
var floorProgram: String?
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
  switch argument {
  case "--changes": changes = Int(arguments.next() ?? "") ?? changes
  case "--backgrounder": backgrounder = arguments.next() ?? backgrounder
  case "--idle-seconds": idleSeconds = Int(arguments.next() ?? "") ?? idleSeconds
  case "--scale": scaleRoutes = Int(arguments.next() ?? "")
  case "--floor": floorProgram = arguments.next()
  default:
    FileHandle.standardError.write(Data("unknown option \(argument)\n".utf8))
    exit(2)
  }
}
guard getuid() == 0 else {
  FileHandle.standardError.write(Data("needs root (network namespaces)\n".utf8))
  exit(2)
}

if let scaleRoutes {
  do {
    print(
      try ScaleRun(
        backgrounder: backgrounder, floor: floorProgram, routes: scaleRoutes, churn: 10_000,
        defaultChanges: 400, linkDowns: 50
      ).run())
    exit(0)
  } catch {
    FileHandle.standardError.write(Data("benchmark failed: \(error)\n".utf8))
    exit(1)
  }
}

let namespace = try BenchmarkNamespace.create(
  name: "bgbench-\(getpid())", commands: BenchmarkNamespace.vethPair(0, address: "192.0.2.1/24"))
defer { namespace.remove() }
do {
  let latencies = try LatencyRun(namespace: namespace, backgrounder: backgrounder).measure(changes)
  print(LatencyRun.report(latencies))
  if idleSeconds > 0 {
    for json in [false, true] {
      print(
        try IdleSyscalls.count(
          backgrounder: backgrounder, namespace: namespace.name, seconds: idleSeconds, json: json))
    }
  }
} catch {
  FileHandle.standardError.write(Data("benchmark failed: \(error)\n".utf8))
  namespace.remove()
  exit(1)
}
