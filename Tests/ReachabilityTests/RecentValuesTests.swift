import Testing

@testable import Reachability

@Suite struct RecentValuesTests {
  @Test func keepsTheValuesOfTheLastKeysUpToItsCapacity() {
    var recent = RecentValues<String, Int>(capacity: 2)
    recent.insert(1, for: "a")
    recent.insert(2, for: "b")
    #expect(recent.value(for: "a") == 1)
    #expect(recent.value(for: "b") == 2)
    recent.insert(3, for: "c")
    #expect(recent.value(for: "a") == nil, "the oldest is dropped beyond the capacity")
    #expect(recent.value(for: "b") == 2)
    #expect(recent.value(for: "c") == 3)
  }

  @Test func computesOnlyForAKeyItDoesNotHold() {
    var recent = RecentValues<String, Int>()
    var computations = 0
    let compute = {
      computations += 1
      return computations
    }
    #expect(recent.value(for: "a", compute: compute) == 1)
    #expect(recent.value(for: "b", compute: compute) == 2)
    #expect(recent.value(for: "a", compute: compute) == 1)
    #expect(computations == 2)
    recent.removeAll()
    #expect(recent.value(for: "a", compute: compute) == 3)
  }

  @Test func findsTheNewestKeyThatMatches() {
    var recent = RecentValues<Int, String>(capacity: 3)
    recent.insert("one", for: 1)
    recent.insert("three", for: 3)
    recent.insert("four", for: 4)
    #expect(recent.value { $0 % 2 == 1 } == "three")
    #expect(recent.value { $0 > 10 } == nil)
  }
}
