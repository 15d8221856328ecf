import CSystemdBus
import Glibc

/// The one gate of every D-Bus signal Backgrounder acts on (logind's sleep and shutdown,
/// NetworkManager's and ModemManager's changes, the bus's `NameOwnerChanged`): a subscription
/// names the service that sends the signal, and its handler sees a signal only when
///
/// - its sender is the service's current owner: the unique name (`:1.42`) that owns the
///   well-known name now, tracked through the bus's `NameOwnerChanged` and asked once with
///   `GetNameOwner` (no owner known: dropped). The bus itself (`org.freedesktop.DBus`) is the
///   only sender of its own signals: no peer can send under that name.
/// - it is broadcast: a signal with a destination (sent to our connection alone) is dropped
///   unless the subscription says the service sends it so (``subscribe(from:match:allowsUnicast:handler:)``).
///
/// The bus's match rule (`sender='org.freedesktop.login1'`) keeps other peers' broadcasts away,
/// but any peer may address a signal to our connection, and sd-bus hands it to the match's
/// callback whatever its sender: on the system bus any local user can do that.
///
/// Used by one thread at a time, the one that processes the connection (as sd-bus is).
public final class BusSignals {
  /// The bus itself: the sender of `NameOwnerChanged`.
  public static let busDriver = "org.freedesktop.DBus"

  /// The current owner of each tracked well-known name (absent: none, or not known).
  final class Owners {
    var byName: [String: String] = [:]
    var tracked: Set<String> = []
  }

  /// One subscription's handler and what its signals must satisfy.
  final class Subscription {
    let service: String
    let allowsUnicast: Bool
    let owners: Owners
    let handler: (OpaquePointer) -> Void
    let refused: ((Refusal) -> Void)?

    init(
      service: String, allowsUnicast: Bool, owners: Owners,
      handler: @escaping (OpaquePointer) -> Void, refused: ((Refusal) -> Void)?
    ) {
      self.service = service
      self.allowsUnicast = allowsUnicast
      self.owners = owners
      self.handler = handler
      self.refused = refused
    }

    func deliver(_ message: OpaquePointer) {
      let sender = sd_bus_message_get_sender(message).map { String(cString: $0) }
      let destination = sd_bus_message_get_destination(message).map { String(cString: $0) }
      let owner = service == BusSignals.busDriver ? BusSignals.busDriver : owners.byName[service]
      guard let owner, sender == owner, destination == nil || allowsUnicast else {
        refused?(
          Refusal(
            service: service, sender: sender, destination: destination,
            member: sd_bus_message_get_member(message).map { String(cString: $0) }))
        return
      }
      handler(message)
    }
  }

  /// A signal that was dropped: who sent it, to whom, and what it was.
  public struct Refusal: Sendable, CustomStringConvertible {
    public var service: String
    public var sender: String?
    public var destination: String?
    public var member: String?

    public var description: String {
      "\(member ?? "a signal") from \(sender ?? "no sender")"
        + (destination.map { " addressed to \($0)" } ?? "")
        + ", not broadcast by \(service)'s owner"
    }
  }

  private let bus: OpaquePointer
  private let callTimeout: UInt64
  private let refused: ((Refusal) -> Void)?
  private let owners = Owners()
  private var subscriptions: [Subscription] = []
  private var slots: [OpaquePointer] = []

  /// Signals on `bus` (a started bus-client connection, which outlives this). `callTimeout`
  /// bounds `GetNameOwner` (microseconds); `refused` hears of every dropped signal.
  public init(
    bus: OpaquePointer, callTimeout: UInt64 = 2_000_000,
    refused: ((Refusal) -> Void)? = nil
  ) {
    self.bus = bus
    self.callTimeout = callTimeout
    self.refused = refused
  }

  deinit {
    for slot in slots { sd_bus_slot_unref(slot) }
  }

  /// Calls `handler` with each signal from `service` that `match` selects (match-rule fields
  /// other than `type` and `sender`, e.g. `path='/org/freedesktop/login1',member='…'`), once
  /// its sender is checked as above. A signal `service` legitimately sends to one connection
  /// needs `allowsUnicast`; none of those Backgrounder watches is such a signal.
  public func subscribe(
    from service: String, match: String, allowsUnicast: Bool = false,
    handler: @escaping (OpaquePointer) -> Void
  ) throws(BusError) {
    if service != Self.busDriver { try track(service) }
    try addMatch(
      "type='signal',sender='\(service)'" + (match.isEmpty ? "" : ",\(match)"),
      Subscription(
        service: service, allowsUnicast: allowsUnicast, owners: owners, handler: handler,
        refused: refused))
  }

  /// The unique name that owns `service` now, as tracked (nil: none, or not known).
  public func owner(of service: String) -> String? { owners.byName[service] }

  /// Follows `service`'s owner: `NameOwnerChanged` first, then `GetNameOwner` (answered after
  /// any change the bus sent before it, so the two, processed in order, end at the truth).
  private func track(_ service: String) throws(BusError) {
    guard owners.tracked.insert(service).inserted else { return }
    let owners = self.owners
    try addMatch(
      "type='signal',sender='\(Self.busDriver)',path='/org/freedesktop/DBus',"
        + "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(service)'",
      Subscription(
        service: Self.busDriver, allowsUnicast: false, owners: owners,
        handler: { message in
          defer { sd_bus_message_rewind(message, 1) }
          guard let name = try? BusMessage.string(message, type: "s"),
            (try? BusMessage.string(message, type: "s")) != nil,
            let new = try? BusMessage.string(message, type: "s")
          else { return }
          owners.byName[name] = new.isEmpty ? nil : new
        }, refused: refused))
    owners.byName[service] = try nameOwner(service)
  }

  /// `GetNameOwner(service)`: its unique name, or nil when nobody owns it.
  private func nameOwner(_ service: String) throws(BusError) -> String? {
    var message: OpaquePointer?
    var result = sd_bus_message_new_method_call(
      bus, &message, Self.busDriver, "/org/freedesktop/DBus", Self.busDriver, "GetNameOwner")
    if result >= 0 { result = csd_append_string(message, service) }
    defer { sd_bus_message_unref(message) }
    guard result >= 0 else {
      throw BusError("GetNameOwner \(service)", result: result)
    }
    var error = csd_error_null()
    defer { sd_bus_error_free(&error) }
    var reply: OpaquePointer?
    result = sd_bus_call(bus, message, callTimeout, &error, &reply)
    defer { sd_bus_message_unref(reply) }
    guard result >= 0, let reply else {
      // An error reply (NameHasNoOwner): nobody owns it; no reply: the bus is gone.
      if csd_error_name(&error) != nil { return nil }
      throw BusError("GetNameOwner \(service)", result: result)
    }
    return try? BusMessage.string(reply, type: "s")
  }

  private func addMatch(_ rule: String, _ subscription: Subscription) throws(BusError) {
    var slot: OpaquePointer?
    let result = sd_bus_add_match(
      bus, &slot, rule,
      { message, context, _ in
        guard let message, let context else { return 0 }
        Unmanaged<Subscription>.fromOpaque(context).takeUnretainedValue().deliver(message)
        return 0
      }, Unmanaged.passUnretained(subscription).toOpaque())
    guard result >= 0, let slot else {
      throw BusError("AddMatch \(rule)", result: result)
    }
    subscriptions.append(subscription)
    slots.append(slot)
  }
}
