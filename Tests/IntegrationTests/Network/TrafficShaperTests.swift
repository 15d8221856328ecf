import Foundation
import Netlink
import TestSupport
import Testing

/// ``TrafficShaper`` against the kernel, in a network namespace of our own (`shap-*`): the HTB
/// class a capped run gets is there with its rate (`tc -s class show`), and gone with the
/// daemon's qdisc after the run; a link whose root qdisc someone configured is left alone; what
/// a killed daemon left is removed; the qdisc is added again when someone deleted it, taken
/// over when a killed daemon left it; a class id that is not the daemon's is never sent.
@Suite(
  .blockingIO,
  .enabled(if: getuid() == 0, "needs root to create network namespaces and veth pairs"),
  .timeLimit(.minutes(3)))
struct TrafficShaperTests {
  /// `tc -n NAMESPACE ARGUMENTS…`'s output.
  private func tc(_ sandbox: NamespaceSandbox, _ arguments: String...) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/sbin/tc")
    process.arguments = ["-n", sandbox.name] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    try #require(process.terminationStatus == 0, "tc \(arguments): \(output)")
    return output
  }

  private func inside<T: Sendable>(
    _ sandbox: NamespaceSandbox, _ body: @escaping @Sendable () throws -> T
  ) throws -> T {
    try NetworkNamespace.perform(inNamespaceAt: sandbox.path, body)
  }

  /// A shaper made in `sandbox`'s namespace: its socket stays there, so it is used from the
  /// test's own thread, where expectations are recorded against the test.
  private func shaper(in sandbox: NamespaceSandbox) throws -> TrafficShaper {
    try inside(sandbox) { Made(shaper: try TrafficShaper()) }.shaper
  }

  /// Carries the shaper out of the namespace's thread; used by one test at a time.
  private struct Made: @unchecked Sendable { let shaper: TrafficShaper }

  @Test("a run's class is added with its rate and removed with the qdisc")
  func classComesAndGoes() throws {
    let sandbox = try NamespaceSandbox.create(prefix: "shap")
    defer { sandbox.remove() }
    let first = TrafficShaper.classID(slot: 0)
    let second = TrafficShaper.classID(slot: 1)
    let shaper = try shaper(in: sandbox)
    let index = try shaper.addClass(
      interface: "veth1", classID: first, bitsPerSecond: 2_000_000)
    try shaper.addClass(interface: "veth1", classID: second, bitsPerSecond: 500_000)
    #expect(index == (try inside(sandbox) { Int32(if_nametoindex("veth1")) }))
    let classes = try tc(sandbox, "-s", "class", "show", "dev", "veth1")
    #expect(
      classes.contains("class htb 6267:1000 root prio 0 rate 2Mbit ceil 2Mbit"), "\(classes)")
    #expect(classes.contains("class htb 6267:1001 root prio 0 rate 500Kbit ceil 500Kbit"))
    #expect(try tc(sandbox, "qdisc", "show", "dev", "veth1").contains("qdisc htb 6267: root"))
    #expect(
      try shaper.classes(interface: "veth1") == [
        .init(classID: first, bytesPerSecond: 250_000),
        .init(classID: second, bytesPerSecond: 62_500),
      ])

    try shaper.removeClass(ifindex: index, classID: first)
    let left = try tc(sandbox, "class", "show", "dev", "veth1")
    #expect(!left.contains("6267:1000") && left.contains("6267:1001"), "\(left)")
    // The last class takes the daemon's qdisc with it; removing again is not an error.
    try shaper.removeClass(ifindex: index, classID: second)
    try shaper.removeClass(ifindex: index, classID: second)
    #expect(try tc(sandbox, "class", "show", "dev", "veth1").isEmpty)
    let qdiscs = try tc(sandbox, "qdisc", "show", "dev", "veth1")
    #expect(!qdiscs.contains("6267:"), "\(qdiscs)")
  }

  @Test("a qdisc deleted from under the shaper comes back with the next class")
  func qdiscDeletedUnderneath() throws {
    let sandbox = try NamespaceSandbox.create(prefix: "shap")
    defer { sandbox.remove() }
    let shaper = try shaper(in: sandbox)
    let index = try shaper.addClass(
      interface: "veth1", classID: TrafficShaper.classID(slot: 0), bitsPerSecond: 1_000_000)
    _ = try tc(sandbox, "qdisc", "del", "dev", "veth1", "root")
    try shaper.addClass(
      interface: "veth1", classID: TrafficShaper.classID(slot: 1), bitsPerSecond: 1_000_000)
    #expect(try shaper.classes(interface: "veth1").map(\.classID) == [0x6267_1001])
    // The class that went with the old qdisc is gone already; the last one takes the qdisc.
    try shaper.removeClass(ifindex: index, classID: TrafficShaper.classID(slot: 0))
    #expect(try tc(sandbox, "qdisc", "show", "dev", "veth1").contains("qdisc htb 6267: root"))
    try shaper.removeClass(ifindex: index, classID: TrafficShaper.classID(slot: 1))
    #expect(!(try tc(sandbox, "qdisc", "show", "dev", "veth1")).contains("6267:"))
  }

  @Test("the daemon's qdisc left on a link is taken over, not refused")
  func leftoverQdiscIsTakenOver() throws {
    let sandbox = try NamespaceSandbox.create(prefix: "shap")
    defer { sandbox.remove() }
    _ = try tc(sandbox, "qdisc", "add", "dev", "veth1", "root", "handle", "6267:", "htb")
    let shaper = try shaper(in: sandbox)
    let index = try shaper.addClass(
      interface: "veth1", classID: TrafficShaper.classID(slot: 2), bitsPerSecond: 1_000_000)
    #expect(try tc(sandbox, "class", "show", "dev", "veth1").contains("6267:1002"))
    try shaper.removeClass(ifindex: index, classID: TrafficShaper.classID(slot: 2))
    #expect(!(try tc(sandbox, "qdisc", "show", "dev", "veth1")).contains("6267:"))
  }

  @Test("a root qdisc someone configured is not replaced")
  func foreignQdiscIsLeftAlone() throws {
    let sandbox = try NamespaceSandbox.create(prefix: "shap")
    defer { sandbox.remove() }
    _ = try tc(sandbox, "qdisc", "add", "dev", "veth1", "root", "handle", "1:", "htb")
    let shaper = try shaper(in: sandbox)
    #expect(throws: ShaperError.self) {
      try shaper.addClass(
        interface: "veth1", classID: TrafficShaper.classID(slot: 0), bitsPerSecond: 1_000_000)
    }
    #expect(try tc(sandbox, "qdisc", "show", "dev", "veth1").contains("qdisc htb 1: root"))
    #expect(try tc(sandbox, "class", "show", "dev", "veth1").isEmpty)
  }

  @Test("what a killed daemon left is removed from every link, and only that")
  func leftoversAreRemoved() throws {
    let sandbox = try NamespaceSandbox.create(prefix: "shap")
    defer { sandbox.remove() }
    try sandbox.ip("link", "set", "veth0", "up")
    _ = try tc(sandbox, "qdisc", "add", "dev", "veth0", "root", "handle", "1:", "htb")
    try shaper(in: sandbox).addClass(
      interface: "veth1", classID: TrafficShaper.classID(slot: 7), bitsPerSecond: 1_000_000)
    let removed = try shaper(in: sandbox).removeAll()
    #expect(removed == ["veth1"])
    #expect(!(try tc(sandbox, "qdisc", "show", "dev", "veth1")).contains("6267:"))
    #expect(try tc(sandbox, "qdisc", "show", "dev", "veth0").contains("qdisc htb 1: root"))
  }

  @Test("a class id that is not the daemon's is refused before anything is sent")
  func foreignClassIsRefused() throws {
    let sandbox = try NamespaceSandbox.create(prefix: "shap")
    defer { sandbox.remove() }
    let shaper = try shaper(in: sandbox)
    // Another major than the daemon's qdisc's: sent, libnl's class_build asserted and the
    // process aborted.
    #expect(throws: ShaperError.foreignClass("1234:1000")) {
      try shaper.addClass(interface: "veth1", classID: 0x1234_1000, bitsPerSecond: 1_000_000)
    }
    #expect(throws: ShaperError.foreignClass("6267:0")) {
      try shaper.addClass(interface: "veth1", classID: 0x6267_0000, bitsPerSecond: 1_000_000)
    }
    let index = try inside(sandbox) { Int32(if_nametoindex("veth1")) }
    #expect(throws: ShaperError.foreignClass("1234:1000")) {
      try shaper.removeClass(ifindex: index, classID: 0x1234_1000)
    }
    let qdiscs = try tc(sandbox, "qdisc", "show", "dev", "veth1")
    #expect(!qdiscs.contains("6267:"), "\(qdiscs)")
    // The shaper goes on: the next class brings its qdisc, and removing it takes the qdisc away.
    let slot = TrafficShaper.classID(slot: 0)
    try shaper.addClass(interface: "veth1", classID: slot, bitsPerSecond: 1_000_000)
    #expect(try tc(sandbox, "qdisc", "show", "dev", "veth1").contains("qdisc htb 6267: root"))
    try shaper.removeClass(ifindex: index, classID: slot)
    #expect(!(try tc(sandbox, "qdisc", "show", "dev", "veth1")).contains("6267:"))
  }
}
