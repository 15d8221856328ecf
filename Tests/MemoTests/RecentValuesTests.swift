import Memo
import Testing

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

  @Test func forgetsEverythingOnRemoveAll() {
    var recent = RecentValues<String, Int>()
    recent.insert(1, for: "a")
    recent.insert(2, for: "b")
    recent.removeAll()
    #expect(recent.value(for: "a") == nil)
    #expect(recent.value(for: "b") == nil)
    recent.insert(3, for: "a")
    #expect(recent.value(for: "a") == 3)
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
