import Locking
import PropertyBased
import TestSupport
import Testing

@testable import Backgrounder

/// Invariants of the dispatch state machine over random histories of schedule, cancel,
/// trigger, network, power, clock and completion events (see ``DispatchSimulation``).
@Suite(.cpuBound) struct DispatchProperties {
  /// Up to 120 steps, each decoded from three small numbers so that failures shrink.
  static let histories = zip(Gen.int(in: 0...10), Gen.int(in: 0...2), Gen.int(in: 0...23))
    .map { DispatchStep(kind: $0.0, task: $0.1, value: $0.2) }
    .array(of: 1...120)

  /// `steps` applied to a fresh simulation, then every run left in flight driven to its end.
  /// `claimAhead`: 0 claims only into free slots, 2 also claims one-time work ahead of them.
  static func simulate(_ steps: [DispatchStep], claimAhead: Int) -> DispatchSimulation {
    var simulation = DispatchSimulation(claimAhead: claimAhead)
    for step in steps { simulation.apply(step) }
    simulation.drain()
    return simulation
  }

  @Test(
    "no task has two runs in flight, and no periodic task runs twice in one cycle",
    arguments: [0, 2])
  func oneRunAtATime(claimAhead: Int) async {
    let promoted = Lock(0)
    await propertyCheck(count: 300, input: Self.histories) { steps in
      let simulation = Self.simulate(steps, claimAhead: claimAhead)
      promoted.withLock { $0 += simulation.promotedClaims }
      #expect(simulation.violations[.oneRunAtATime] == nil, "after \(steps)")
      #expect(simulation.violations[.oneRunPerCycle] == nil, "after \(steps)")
    }
    // The histories do reach claims made ahead (three tasks, two slots).
    #expect((promoted.withLock { $0 } > 0) == (claimAhead > 0))
  }

  @Test(
    "deferrals (network gate, power block, lost constraint) never use an attempt",
    arguments: [0, 2])
  func deferralsKeepAttempts(claimAhead: Int) async {
    await propertyCheck(count: 300, input: Self.histories) { steps in
      let simulation = Self.simulate(steps, claimAhead: claimAhead)
      #expect(simulation.violations[.attempts] == nil, "after \(steps)")
    }
  }

  @Test("every accepted one-time task finishes once its constraints hold", arguments: [0, 2])
  func oneTimeTasksFinish(claimAhead: Int) async {
    await propertyCheck(count: 300, input: Self.histories) { steps in
      let simulation = Self.simulate(steps, claimAhead: claimAhead)
      let unfinished = simulation.acceptedOneTime.subtracting(simulation.finishedOneTime)
      #expect(unfinished.isEmpty, "\(unfinished.sorted()) never finished after \(steps)")
    }
  }
}

/// Unknown is not permission, over random interleavings of source answers and losses (a
/// source not answered yet or no longer answering, connectivity expected but unknown, no
/// source configured), power changes, triggers, completions and due times.
@Suite(.cpuBound) struct UnknownIsNotPermissionProperties {
  @Test(
    "no run starts while a condition its network requirement needs is unknown or unmet",
    arguments: [0, 2])
  func noStartWithoutPermission(claimAhead: Int) async {
    let starts = Lock((all: 0, afterUnknown: 0))
    await propertyCheck(count: 400, input: DispatchProperties.histories) { steps in
      let simulation = DispatchProperties.simulate(steps, claimAhead: claimAhead)
      starts.withLock {
        $0.all += simulation.networkStarts
        $0.afterUnknown += simulation.startsAfterUnknown
      }
      #expect(simulation.violations[.startedWithoutPermission] == nil, "after \(steps)")
    }
    // The histories do start network work, also after a source came back from unknown.
    #expect(starts.withLock { $0.all } > 0)
    #expect(starts.withLock { $0.afterUnknown } > 0)
  }
}
