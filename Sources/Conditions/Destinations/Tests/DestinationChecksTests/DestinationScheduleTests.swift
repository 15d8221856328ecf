import Backgrounder
import Testing

@testable import DestinationChecks

/// When destinations are checked (pure: the instants are given, no clock runs).
@Suite struct DestinationScheduleTests {
  let t0 = ContinuousClock.now
  let home = NetworkKey(primaryLink: "wlan0", ssid: "Home", addresses: ["3"])
  let cafe = NetworkKey(primaryLink: "wlan0", ssid: "Cafe", addresses: ["3"])
  let nas = "nas.lan:445"

  @Test("nothing is checked before the network answers; then every destination, once")
  func checksAfterTheFirstAnswer() {
    var schedule = DestinationSchedule()
    let named = schedule.setDestinations([nas, "10.0.0.1:22"], now: t0)
    #expect(named.probes.isEmpty)
    #expect(named.publish == nil)
    let first = schedule.networkChanged(to: home, now: t0)
    #expect(first.probes == ["10.0.0.1:22", nas])
    #expect(first.nextWake == nil)
    // The same network again (a status change that is not a network change): nothing.
    #expect(schedule.networkChanged(to: home, now: t0 + .seconds(1)).probes.isEmpty)
    // Not checked yet is not reachable.
    #expect(!schedule.conditions.isReachable(nas))
  }

  @Test("unreachable: checked again after 5 s, doubling to 5 min; reachable: no timer")
  func backoffWhileUnreachable() {
    var schedule = DestinationSchedule()
    _ = schedule.setDestinations([nas], now: t0)
    _ = schedule.networkChanged(to: home, now: t0)
    let generation = schedule.generation
    var now = t0
    var delays: [Duration] = []
    for _ in 0..<9 {
      let decision = schedule.checked(nas, .unreachable(.refused), generation: generation, now: now)
      let wake = try! #require(decision.nextWake)
      delays.append(now.duration(to: wake))
      // Not due yet: nothing to check.
      #expect(schedule.wake(now: wake - .milliseconds(1)).probes.isEmpty)
      now = wake
      #expect(schedule.wake(now: now).probes == [nas])
    }
    #expect(delays.map { $0 / .seconds(1) } == [5, 10, 20, 40, 80, 160, 300, 300, 300])
    #expect(schedule.conditions.failure(of: nas) == .refused)
    let reachable = schedule.checked(nas, .reachable, generation: generation, now: now)
    #expect(reachable.nextWake == nil)
    #expect(reachable.publish == DestinationConditions(states: [nas: .reachable]))
    #expect(schedule.wake(now: now + .seconds(3600)).probes.isEmpty)
  }

  @Test("an answer holds on its network only, not on a later visit; a late check is dropped")
  func answersHoldForOneVisit() {
    var schedule = DestinationSchedule()
    _ = schedule.setDestinations([nas], now: t0)
    _ = schedule.networkChanged(to: home, now: t0)
    let atHome = schedule.generation
    _ = schedule.checked(nas, .reachable, generation: atHome, now: t0)
    let toCafe = schedule.networkChanged(to: cafe, now: t0 + .seconds(1))
    #expect(toCafe.probes == [nas])
    #expect(toCafe.publish == .unconfigured, "not checked on this network yet")
    // A late answer from home does not count for the cafe.
    let late = schedule.checked(nas, .reachable, generation: atHome, now: t0 + .seconds(2))
    #expect(late.publish == nil)
    #expect(!schedule.conditions.isReachable(nas))
    _ = schedule.checked(
      nas, .unreachable(.timedOut), generation: schedule.generation, now: t0 + .seconds(4))
    #expect(schedule.conditions.failure(of: nas) == .timedOut)
    // Back home: the answer of the first visit is not permission (the server may have gone
    // since); nothing is known until the new check answers.
    let back = schedule.networkChanged(to: home, now: t0 + .seconds(5))
    #expect(back.publish == .unconfigured)
    #expect(!schedule.conditions.isReachable(nas))
    #expect(back.probes == [nas])
    #expect(back.nextWake == nil, "the cafe's backoff ends with the change")
    let refused = schedule.checked(
      nas, .unreachable(.refused), generation: schedule.generation, now: t0 + .seconds(6))
    #expect(refused.publish == DestinationConditions(states: [nas: .unreachable(.refused)]))
  }

  @Test("no primary link: no route, known at once, nothing connected")
  func offline() {
    var schedule = DestinationSchedule()
    _ = schedule.setDestinations([nas], now: t0)
    let offline = schedule.networkChanged(
      to: NetworkKey(primaryLink: nil, ssid: nil, addresses: []), now: t0)
    #expect(offline.probes.isEmpty)
    #expect(offline.publish == DestinationConditions(states: [nas: .unreachable(.noRoute)]))
    #expect(offline.nextWake == nil)
  }
}
