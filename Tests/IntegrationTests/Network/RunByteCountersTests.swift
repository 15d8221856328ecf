import Foundation
import Testing

@testable import BackgrounderDaemon

/// ``RunByteCounters`` against the kernel: programs linked to a directory of run cgroups (a
/// private cgroup2 mount) count each run cgroup's packets apart, and a run's entries go when it
/// ends.
@Suite(
  .blockingIO, .enabled(if: getuid() == 0, "needs root to mount cgroup2 and load BPF programs"),
  .timeLimit(.minutes(1)))
struct RunByteCountersTests {
  @Test("two run cgroups counted apart; an ended run's entries are deleted")
  func runsAreCountedApart() throws {
    guard let hierarchy = try TestCgroup.make() else { return }
    defer { hierarchy.remove() }
    let runs = hierarchy.root + "/runs"
    try FileManager.default.createDirectory(atPath: runs, withIntermediateDirectories: false)
    let counters = try RunByteCounters(runsDirectory: runs)
    var ids: [UInt64] = []
    for (index, payload) in [100_000, 300_000].enumerated() {
      let cgroup = runs + "/\(index)"
      try FileManager.default.createDirectory(atPath: cgroup, withIntermediateDirectories: false)
      let id = try #require(RunByteCounters.cgroupID(cgroup))
      counters.begin(id)
      ids.append(id)
      try sendOverLoopback(payload, inCgroup: cgroup)
    }
    // Both ends are in the run's cgroup: each payload leaves on loopback (index 1) once, with
    // its headers.
    let loopbackOut = RunByteCounters.Key(interfaceIndex: if_nametoindex("lo"), received: false)
    let first = try counters.counts(of: ids[0], ending: false)
    let second = try counters.counts(of: ids[1], ending: false)
    let firstOut = try #require(first[loopbackOut], "\(first)")
    let secondOut = try #require(second[loopbackOut], "\(second)")
    #expect(firstOut >= 100_000 && firstOut < 110_000, "\(first)")
    #expect(secondOut >= 300_000 && secondOut < 330_000, "\(second)")

    // The first run ends: its entries go, the second's stay.
    #expect(try counters.counts(of: ids[0], ending: true) == first)
    #expect(try counters.counts(of: ids[0], ending: false).isEmpty)
    #expect(try counters.counts(of: ids[1], ending: false) == second)
    #expect(counters.uncountedBytes == 0)
    for index in 0..<2 { rmdir(runs + "/\(index)") }
  }

  @Test("a full map: packets that find no room are added up apart, reported, and kept")
  func aFullMapCountsWhatItLost() throws {
    guard let hierarchy = try TestCgroup.make() else { return }
    defer { hierarchy.remove() }
    let runs = hierarchy.root + "/runs"
    try FileManager.default.createDirectory(atPath: runs, withIntermediateDirectories: false)
    // Room for the uncounted key and one more: the run's first key (loopback, sent) fits, its
    // second (loopback, received) does not.
    let counters = try RunByteCounters(runsDirectory: runs, capacity: 2)
    let cgroup = runs + "/0"
    try FileManager.default.createDirectory(atPath: cgroup, withIntermediateDirectories: false)
    defer { rmdir(cgroup) }
    let id = try #require(RunByteCounters.cgroupID(cgroup))
    counters.begin(id)
    try sendOverLoopback(100_000, inCgroup: cgroup)
    let counts = try counters.counts(of: id, ending: true)
    #expect(counts.count == 1, "\(counts)")
    let sent = try #require(counts.values.first)
    // What was received went uncounted: as many bytes as were sent, give or take the handshake.
    #expect(counters.uncountedBytes >= 100_000, "\(counters.uncountedBytes)")
    #expect(counters.uncountedBytes < sent + 10_000, "\(counters.uncountedBytes) vs \(sent)")
    // The run's end deleted its entries, not the uncounted one; it is still read.
    _ = try counters.counts(of: id, ending: true)
    #expect(counters.uncountedBytes >= 100_000)
    let problems = CgroupByteAccounting(counters: counters).problems()
    #expect(problems.map(\.kind) == [CgroupByteAccounting.problemKind])
    #expect(problems.first?.message.contains("the kernel's run-bytes map was full") == true)
  }

  /// Runs a Python program in `cgroup` that sends `payload` bytes to itself over loopback.
  private func sendOverLoopback(_ payload: Int, inCgroup cgroup: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = [
      "-c",
      """
      echo $$ > \(cgroup)/cgroup.procs && exec /usr/bin/python3 -c '
      import socket, threading
      s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
      def drain():
          c, _ = s.accept()
          while c.recv(65536): pass
      t = threading.Thread(target=drain); t.start()
      c = socket.create_connection(s.getsockname()); c.sendall(b"x" * \(payload)); c.close()
      t.join()'
      """,
    ]
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
  }
}
