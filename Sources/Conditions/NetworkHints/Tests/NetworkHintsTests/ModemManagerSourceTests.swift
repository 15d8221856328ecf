import DBus
import Reachability
import Testing

@testable import NetworkHints

/// The ModemManager source's life, with the time passed in (microseconds), and what a modem's
/// registration says about its bearer's interface.
@Suite struct ModemManagerSourceTests {
  static let limits = NetworkManagerSource.Limits(
    sourceTimeout: .milliseconds(5), staleLimit: .milliseconds(120))
  static let roaming = ModemManagerSnapshot(roaming: ["wwan0": true])
  static let home = ModemManagerSnapshot(roaming: ["wwan0": false])

  @Test func registrationStatesOfModemManagerEnums() {
    // MMModem3gppRegistrationState (ModemManager-enums.h).
    let expected: [UInt32: Bool?] = [
      0: nil, 1: false, 2: nil, 3: nil, 4: nil, 5: true, 6: false, 7: true, 8: nil, 9: false,
      10: true, 11: nil, 12: nil,
    ]
    for (value, roaming) in expected {
      #expect(ModemManagerSnapshot.roaming(registrationState: value) == roaming, "\(value)")
    }
  }

  @Test func aModemSaysSomethingOnlyForItsBearersWhileRegistered() {
    func modem(_ state: UInt32) -> [String: [String: BusValue]] {
      [
        ModemManagerSnapshot.modemInterface: ["Bearers": .objectPaths(["/b/0"])],
        ModemManagerSnapshot.modem3gppInterface: ["RegistrationState": .uint32(state)],
      ]
    }
    var snapshot = ModemManagerSnapshot()
    snapshot.add(modem: modem(5), bearerInterfaces: ["wwan0", ""])
    snapshot.add(modem: modem(2), bearerInterfaces: ["wwan1"])
    snapshot.add(modem: [:], bearerInterfaces: ["wwan2"])
    #expect(snapshot.roaming == ["wwan0": true])
    #expect(ModemManagerSnapshot.bearers(of: modem(1)) == ["/b/0"])
    #expect(ModemManagerSnapshot.bearers(of: [:]).isEmpty)
  }

  @Test func waitsUntilTheFirstAnswerAndIsAbsentWhenNotOnTheBus() {
    var source = ModemManagerSource(limits: Self.limits, wall: 100)
    #expect(source.state == .waiting(since: 100))
    #expect(source.readTimeout == 5_000)
    var absent = source
    #expect(absent.notOnBus(now: 0, wall: 101) == .init(snapshot: .absent, state: .absent))
    #expect(source.answered(Self.roaming) == .init(snapshot: Self.roaming, state: .answered))
    #expect(source.answered(Self.roaming) == nil, "nothing changed")
    #expect(source.answered(Self.home) == .init(snapshot: Self.home, state: .answered))
  }

  @Test func silentAtStartTimesOut() {
    var source = ModemManagerSource(limits: Self.limits, wall: 100)
    #expect(
      source.silent(now: 5_000, wall: 100.005)
        == .init(snapshot: .absent, state: .timedOut(since: 100.005)))
    #expect(source.silent(now: 9_000, wall: 100.009) == nil, "reported once")
  }

  @Test func aRestartKeepsTheLastAnswerStaleUntilItAnswersForTheLink() {
    var source = ModemManagerSource(limits: Self.limits, wall: 100)
    _ = source.answered(Self.roaming)
    #expect(
      source.notOnBus(now: 1_000, wall: 200)
        == .init(snapshot: Self.roaming, state: .stale(since: 200)))
    #expect(source.staleUntil == 121_000)
    // Back, still probing its modems: the stale answer for wwan0 stays.
    #expect(source.answered(ModemManagerSnapshot()) == nil)
    #expect(source.state == .stale(since: 200))
    // Answers for the link again: fresh.
    #expect(source.answered(Self.home) == .init(snapshot: Self.home, state: .answered))
    #expect(source.staleUntil == nil)
  }

  @Test func aStaleAnswerIsDroppedAtTheLimit() {
    var source = ModemManagerSource(limits: Self.limits, wall: 100)
    _ = source.answered(Self.roaming)
    _ = source.silent(now: 1_000, wall: 200)
    #expect(source.tick(now: 120_999, wall: 200.1) == nil)
    #expect(
      source.tick(now: 121_000, wall: 200.2)
        == .init(snapshot: .absent, state: .expired(since: 200.2)))
    // Back without the modem, stale limit passed meanwhile: its own answer decides.
    var back = ModemManagerSource(limits: Self.limits, wall: 100)
    _ = back.answered(Self.roaming)
    _ = back.notOnBus(now: 0, wall: 200)
    _ = back.answered(ModemManagerSnapshot(roaming: ["wwan1": false]))
    #expect(
      back.tick(now: 120_000, wall: 300)
        == .init(snapshot: ModemManagerSnapshot(roaming: ["wwan1": false]), state: .answered))
  }
}
