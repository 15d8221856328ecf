import Foundation
import TestSupport
import Testing

/// The `.cpuBound` trait: a suite's tests, property checks included, run on the CPU-bound
/// threads, not the cooperative pool the run's other tests wait on.
@Suite(.cpuBound) struct CPUBoundTraitTests {
  private static func threadName() -> String {
    let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
    return name.trimmingCharacters(in: .newlines)
  }

  @Test func theTestRunsOnACPUBoundThread() async {
    #expect(Self.threadName().hasPrefix("cpu-bound"), "\(Self.threadName())")
    await Task.yield()
    #expect(Self.threadName().hasPrefix("cpu-bound"), "after a yield: \(Self.threadName())")
  }
}
