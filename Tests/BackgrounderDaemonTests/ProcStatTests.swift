import Foundation
import Testing

@testable import BackgrounderDaemon

/// `/proc/PID/stat` read as bytes: the fields containment uses, and nothing from a bad line.
@Suite struct ProcStatTests {
  @Test func kernelLineWithNegativeFieldsAndNewlineParses() {
    let line =
      "17 (kworker/0:1-events) I 2 0 0 0 -1 69238880 0 0 0 0 0 12 0 0 20 0 1 0 987654321 0 0\n"
    #expect(
      ProcStat.parse(line)
        == ProcStat(
          pid: 17, state: "I", parent: 2, processGroup: 0, session: 0, startTime: 987_654_321))
  }

  @Test(arguments: [
    "",
    "4242 a) S 1 4242 4242 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",  // no "("
    "4242 (a S 1 4242 4242 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",  // no ")"
    "x (a) S 1 4242 4242 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",  // pid not a number
    "4242 (a) S 1 4242 4242 0 -1 0 0 0",  // too few fields
    "4242 (a) S one 4242 4242 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",  // parent not a number
    "4242 (a) SS 1 4242 4242 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",  // state not one letter
    "4242 (a) S 1 4242 4242 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5",  // negative start time
    "4242 (a) S 1 99999999999 4242 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",  // group overflows
  ])
  func malformedLineIsRejected(_ line: String) {
    #expect(ProcStat.parse(line) == nil)
  }

  @Test func ownProcessReadsAsTheKernelSeesIt() throws {
    let own = try #require(ProcStat.read(pid: getpid()))
    #expect(own.pid == getpid())
    #expect(own.parent == getppid())
    #expect(own.processGroup == getpgrp())
    #expect(own.session == getsid(0))
    #expect(own.startTime > 0)
    #expect(ProcStat.read(pid: -1) == nil)
  }

  @Test func everyProcessIncludesThisOneAndItsParent() {
    let pids = Set(ProcStat.all().map(\.pid))
    #expect(pids.contains(getpid()))
    #expect(pids.contains(getppid()))
    #expect(ProcStat.all(procRoot: "/nonexistent").isEmpty)
  }
}
