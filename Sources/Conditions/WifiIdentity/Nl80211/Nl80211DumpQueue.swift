/// The nl80211 dumps still to read, sent one at a time: the kernel refuses a second dump on a
/// socket (`EBUSY`) while one is running. Pure: the driver sends what ``next()`` hands out and
/// reports each `NLMSG_DONE` / `NLMSG_ERROR` with ``ended(sequence:)``.
public struct Nl80211DumpQueue: Sendable {
  /// One dump request.
  public enum Dump: Sendable, Equatable {
    /// `GET_INTERFACE` of every interface.
    case interfaces
    /// `GET_SCAN` of one interface: the BSS it is associated with, among those it has seen.
    case scan(interfaceIndex: UInt32)
  }

  private var waiting: [Dump] = []
  private var running: Dump?
  private var runningSequence: UInt32?

  /// Creates an empty queue.
  public init() {}

  /// Whether no dump is waiting or running.
  public var isIdle: Bool { waiting.isEmpty && running == nil }

  /// Queues `dump` unless the same one is already waiting (a running one is not enough: what
  /// it reads may predate the reason for asking again).
  public mutating func enqueue(_ dump: Dump) {
    if !waiting.contains(dump) { waiting.append(dump) }
  }

  /// The dump to send now, if none is running; it counts as running from here on, and
  /// ``sent(sequence:)`` gives its sequence number.
  public mutating func next() -> Dump? {
    guard running == nil, !waiting.isEmpty else { return nil }
    let dump = waiting.removeFirst()
    running = dump
    runningSequence = nil
    return dump
  }

  /// Records the sequence number the running dump was sent with.
  public mutating func sent(sequence: UInt32) {
    if running != nil { runningSequence = sequence }
  }

  /// The running dump, when `sequence` (of an `NLMSG_DONE` or `NLMSG_ERROR`) is its own; it
  /// is finished from here on. Other sequences (answers to single requests) give `nil`.
  public mutating func ended(sequence: UInt32) -> Dump? {
    guard let running, runningSequence == sequence else { return nil }
    self.running = nil
    runningSequence = nil
    return running
  }
}
