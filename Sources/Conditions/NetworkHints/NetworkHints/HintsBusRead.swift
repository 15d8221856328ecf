import CSystemdBus
import DBus

/// One round of reads — NetworkManager's, ModemManager's or both — made with asynchronous calls
/// on the hints' bus connection while the event loop serves it: nothing blocks the loop and no
/// thread is started for them. Each source's read has one deadline for all its calls (its source
/// timeout, from the read's start: a silent NetworkManager does not use up ModemManager's
/// time), and the calls that depend on a first answer (NetworkManager's devices, ModemManager's
/// bearers) go out together once it came. ``finished`` hears both results once, when the last
/// read ended; dropping the read cancels whatever is still asked.
final class HintsBusRead {
  /// What each read gave (nil: not read).
  struct Results: Sendable {
    var networkManager: Result<NetworkManagerSnapshot, BusError>?
    var modemManager: Result<ModemManagerSnapshot, BusError>?
  }

  private var results = Results()
  private var networkManager: BusReadCalls?
  private var modemManager: BusReadCalls?
  private var finished: ((Results) -> Void)?

  /// Starts the reads whose timeout (microseconds) is given; `finished` runs when both ended,
  /// in a callback of the connection (while it is processed).
  init(
    bus: BusConnection, networkManagerTimeout: UInt64?, modemManagerTimeout: UInt64?,
    finished: @escaping (Results) -> Void
  ) {
    self.finished = finished
    let now = csd_monotonic_microseconds()
    if let timeout = networkManagerTimeout {
      networkManager = BusReadCalls(bus: bus, deadline: now &+ timeout)
    }
    if let timeout = modemManagerTimeout {
      modemManager = BusReadCalls(bus: bus, deadline: now &+ timeout)
    }
    if let calls = networkManager {
      NetworkManagerSnapshot.read(with: calls) { [unowned self] result in
        results.networkManager = result
        networkManager = nil
        finishIfDone()
      }
    }
    if let calls = modemManager {
      ModemManagerSnapshot.read(with: calls) { [unowned self] result in
        results.modemManager = result
        modemManager = nil
        finishIfDone()
      }
    }
    finishIfDone()
  }

  deinit {
    // Dropped before it ended: its calls go (and with them what their handlers hold).
    networkManager?.end()
    modemManager?.end()
  }

  private func finishIfDone() {
    guard networkManager == nil, modemManager == nil, let finished else { return }
    self.finished = nil
    finished(results)
  }
}

/// The calls of one source's read, all answered (or timed out) before one deadline: each
/// answer is handed over at most once, and none after ``end()``, which drops the calls still
/// asked (sd-bus forgets them).
final class BusReadCalls {
  let bus: BusConnection
  /// Monotonic microseconds.
  let deadline: UInt64
  private var calls: [BusPendingCall] = []
  private(set) var isOver = false

  init(bus: BusConnection, deadline: UInt64) {
    self.bus = bus
    self.deadline = deadline
  }

  /// Asks `member` of `interface` on `path` of `destination` with the time left; `answered`
  /// gets the reply read by `read` (a reply it cannot read is a failure with no error name),
  /// or the failure: a ``BusError/isTimeout`` one when the deadline passed.
  func ask<Value>(
    _ destination: String, _ path: String, _ interface: String, _ member: String,
    _ arguments: [BusArgument], read: @escaping (BusMessage) throws(BusError) -> Value,
    answered: @escaping (Result<Value, BusError>) -> Void
  ) {
    // The read ended (a failure handed over mid-loop): ask nothing more.
    guard !isOver else { return }
    let now = csd_monotonic_microseconds()
    guard now < deadline else {
      return answered(
        .failure(BusError(description: "\(member) \(path): no answer in time", isTimeout: true)))
    }
    do throws(BusError) {
      calls.append(
        try bus.callAsync(
          destination: destination, path: path, interface: interface, member: member,
          arguments: arguments, timeout: .microseconds(Int64(deadline - now))
        ) { [unowned self] reply in
          guard !isOver else { return }
          answered(
            reply.flatMap { message in
              Result { () throws(BusError) in
                do {
                  return try read(message)
                } catch {
                  throw BusError(description: "\(member) \(path): malformed reply: \(error)")
                }
              }
            })
        })
    } catch {
      answered(.failure(error))
    }
  }

  /// `org.freedesktop.DBus.Properties.GetAll(interface)` of `path` (``ask(_:_:_:_:_:read:answered:)``).
  func allProperties(
    _ destination: String, _ path: String, _ interface: String,
    answered: @escaping (Result<[String: BusValue], BusError>) -> Void
  ) {
    ask(
      destination, path, "org.freedesktop.DBus.Properties", "GetAll", [.string(interface)],
      read: { message throws(BusError) in try message.dictionary() }, answered: answered)
  }

  /// `done`, to be called at most once: the first call ends the read (``end()``) and hands its
  /// result over; later ones (an answer after a timeout) do nothing.
  func once<Value>(_ done: @escaping (Result<Value, BusError>) -> Void)
    -> (Result<Value, BusError>) -> Void
  {
    { [self] result in
      guard !isOver else { return }
      end()
      done(result)
    }
  }

  /// The read ended: no more answers are handed over, the calls still asked are dropped.
  func end() {
    isOver = true
    calls = []
  }
}
