import CTestSupport
import Foundation
import Testing

/// The test process bounds how many test cases run at once (Tests/CTestSupport/
/// parallelization_width.c): all of them at once starved the cooperative pool for longer than
/// the tests' liveness bounds on 2 cores.
@Suite struct ParallelizationBoundTests {
  @Test("swift-testing's width is bounded in this process: 4 per core unless set explicitly")
  func widthIsBounded() throws {
    let variable = "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH"
    let text = try #require(ProcessInfo.processInfo.environment[variable], "\(variable) unset")
    let width = try #require(Int(text), "\(variable)=\(text)")
    #expect(width > 0)
    let cores = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    #expect(ctestsupport_parallelization_bound() == 4 * cores)
  }
}
