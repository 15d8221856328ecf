import CSystemdBus
import DBus
import Reachability

/// ModemManager on the hints loop's bus connection: its `GetManagedObjects`, re-read after
/// `NameOwnerChanged`, `InterfacesAdded`/`InterfacesRemoved` and the `PropertiesChanged` of a
/// modem's 3GPP registration, a modem's bearers or a bearer (not of its signal quality, which
/// changes every few seconds); the decisions are ``ModemManagerSource``'s.
extension HintsEventLoop {
  /// The subscriptions to ModemManager's signals, whose handlers ask for a re-read.
  func addModemManagerMatches(_ bus: BusConnection) throws(BusError) {
    let signals = modemManagerSignals
    let service = ModemManagerSnapshot.service
    let root = ModemManagerSnapshot.rootPath
    try bus.subscribe(
      from: BusSignals.busDriver,
      match: "path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',"
        + "member='NameOwnerChanged',arg0='\(service)'"
    ) { _ in signals.refreshNeeded = true }
    var rules = ["path='\(root)',interface='org.freedesktop.DBus.ObjectManager'"]
    for interface in [
      ModemManagerSnapshot.modem3gppInterface, ModemManagerSnapshot.bearerInterface,
    ] {
      rules.append(Self.propertiesChangedRule(root: root, interface: interface))
    }
    for rule in rules {
      try bus.subscribe(from: service, match: rule) { _ in signals.refreshNeeded = true }
    }
    // A modem's `PropertiesChanged`: a re-read only when its `Bearers` changed.
    try bus.subscribe(
      from: service,
      match: Self.propertiesChangedRule(root: root, interface: ModemManagerSnapshot.modemInterface)
    ) { message in
      if Self.changesBearers(message) { signals.refreshNeeded = true }
    }
  }

  /// Publishes what ``ModemManagerSource`` decides from a read of ModemManager's modems and
  /// bearers (made off the loop with NetworkManager's).
  func finishModemManagerRead(_ result: Result<ModemManagerSnapshot, BusError>) {
    guard var source = modemManager else { return }
    let publication: ModemManagerSource.Publication?
    do {
      publication = source.answered(try result.get())
    } catch {
      if error.isTimeout {
        logger.info("ModemManager did not answer within \(source.limits.sourceTimeout): \(error)")
        publication = source.silent(now: csd_monotonic_microseconds(), wall: wallSeconds())
      } else if error.name == nil {
        lostBus(error)
        return
      } else {
        if source.state != .absent { logger.debug("ModemManager not available: \(error)") }
        publication = source.notOnBus(now: csd_monotonic_microseconds(), wall: wallSeconds())
      }
    }
    modemManager = source
    if let publication { publishModemManager(publication) }
  }

  /// ModemManager is not reachable over D-Bus: a last answer is kept as stale.
  func modemManagerNotOnBus() {
    guard var source = modemManager else { return }
    let publication = source.notOnBus(now: csd_monotonic_microseconds(), wall: wallSeconds())
    modemManager = source
    if let publication { publishModemManager(publication) }
  }

  /// Drops a stale answer whose limit passed.
  func tickModemManager() {
    guard var source = modemManager else { return }
    let publication = source.tick(now: csd_monotonic_microseconds(), wall: wallSeconds())
    modemManager = source
    guard let publication else { return }
    logger.info("ModemManager stayed away past the stale limit: roaming not known")
    publishModemManager(publication)
  }

  private func publishModemManager(_ publication: ModemManagerSource.Publication) {
    monitor.updateHints { hints in
      hints.modemManagerRoaming = publication.snapshot.roaming
      hints.sources[.modemManager] = publication.state
    }
  }

  private static func propertiesChangedRule(root: String, interface: String) -> String {
    "path_namespace='\(root)',interface='org.freedesktop.DBus.Properties',"
      + "member='PropertiesChanged',arg0='\(interface)'"
  }

  /// Whether a `PropertiesChanged(s, a{sv}, as)` names `Bearers`, changed or invalidated;
  /// `true` when it cannot be read. Leaves the message rewound for other callbacks.
  static func changesBearers(_ message: BusMessage) -> Bool {
    defer { message.rewind() }
    guard let (_, changed, invalidated) = try? message.propertiesChanged() else { return true }
    return changed["Bearers"] != nil || invalidated.contains("Bearers")
  }

}
