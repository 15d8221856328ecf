import BenchmarkSupport
import Foundation

// NetworkManager hints benchmark. Run as root with dbus-daemon and python3-dbusmock installed:
//   swift build -c release --product backgrounder
//   swift run --package-path Benchmarks -c release NetworkManagerBenchmark \
//     [--changes N] [--idle-seconds S]
// A private dbus-daemon runs python-dbusmock's NetworkManager template; a real
// `backgrounder status --watch --json` child (DBUS_SYSTEM_BUS_ADDRESS pointing at that bus) watches
// a network namespace whose veth0 is the primary link and NetworkManager's Wi-Fi device.
// Latency: from just before the driver asks the mock to change `Metered` (which makes it emit
// PropertiesChanged) to the moment the matching status line reaches this process; it includes
// the mock's own handling (Python) and our GetAll re-read. Idle: `strace -f -c` of the child
// for S seconds after a 10 s settle, with NetworkManager present.

var changes = 200
var backgrounder = ".build/release/backgrounder"
var idleSeconds = 30
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
  switch argument {
  case "--changes": changes = Int(arguments.next() ?? "") ?? changes
  case "--backgrounder": backgrounder = arguments.next() ?? backgrounder
  case "--idle-seconds": idleSeconds = Int(arguments.next() ?? "") ?? idleSeconds
  default:
    FileHandle.standardError.write(Data("unknown option \(argument)\n".utf8))
    exit(2)
  }
}
guard getuid() == 0 else {
  FileHandle.standardError.write(Data("needs root (network namespaces)\n".utf8))
  exit(2)
}

let setup = try BenchmarkSetup()
do {
  let latencies = try setup.measureLatency(changes: changes, backgrounder: backgrounder)
  print(BenchmarkSetup.report(latencies))
  if idleSeconds > 0 {
    print(try setup.idleSyscalls(seconds: idleSeconds, backgrounder: backgrounder))
  }
  setup.remove()
} catch {
  FileHandle.standardError.write(Data("benchmark failed: \(error)\n".utf8))
  setup.remove()
  exit(1)
}
