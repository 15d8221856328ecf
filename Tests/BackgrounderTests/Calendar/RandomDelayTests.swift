import Foundation
import Testing

@testable import Backgrounder

@Suite("Random delays")
struct RandomDelayTests {
  @Test("a fixed random delay is stable for a machine and job, and spreads across machines")
  func fixedDelaySpreadsAcrossMachines() {
    let maximum = Duration.seconds(1800)
    let machine = "0123456789abcdef0123456789abcdef"
    let delay = RandomDelay.fixed(machineId: machine, jobId: "dev.example.backup", maximum: maximum)
    #expect(
      delay == RandomDelay.fixed(machineId: machine, jobId: "dev.example.backup", maximum: maximum))
    // Recorded from an earlier process: the delay must not depend on a per-process seed
    // (as `Hasher`'s does), or a box would lose its slot at every restart.
    #expect(delay == .nanoseconds(467_158_138_703))
    var buckets = [Int](repeating: 0, count: 10)
    var random = SplitMix64(seed: 7)
    for _ in 0..<2000 {
      let id = String(format: "%016llx%016llx", random.next(), random.next())
      let value = RandomDelay.fixed(machineId: id, jobId: "dev.example.backup", maximum: maximum)
      #expect(value >= .zero && value <= maximum)
      buckets[Int(value.components.seconds / 180)] += 1
    }
    // Uniform: each tenth of the range gets 200 ± a generous margin.
    #expect(buckets.allSatisfy { (120...280).contains($0) }, "\(buckets)")
    #expect(
      RandomDelay.fixed(machineId: machine, jobId: "dev.example.other", maximum: maximum) != delay)
  }
}
