import DBus

/// What ModemManager says at one moment, read over D-Bus: for each network interface a modem's
/// bearer uses, whether the modem is registered on a roaming network.
struct ModemManagerSnapshot: Sendable, Equatable {
  /// Roaming per bearer interface name, for the modems registered on a network (home or
  /// roaming); a modem that is not registered (idle, searching, denied, emergency only) says
  /// nothing about its interfaces.
  var roaming: [String: Bool] = [:]

  /// ModemManager absent: no opinion on anything.
  static let absent = ModemManagerSnapshot()

  static let service = "org.freedesktop.ModemManager1"
  static let rootPath = "/org/freedesktop/ModemManager1"
  static let modemInterface = "org.freedesktop.ModemManager1.Modem"
  static let modem3gppInterface = "org.freedesktop.ModemManager1.Modem.Modem3gpp"
  static let bearerInterface = "org.freedesktop.ModemManager1.Bearer"

  /// Whether `MMModem3gppRegistrationState` `value` is roaming: `true` for roaming (5),
  /// roaming SMS-only (7) and roaming CSFB-not-preferred (10); `false` for home (1), home
  /// SMS-only (6) and home CSFB-not-preferred (9); `nil` when not registered (idle 0,
  /// searching 2, denied 3, unknown 4, emergency only 8, attached RLOS 11, anything newer).
  static func roaming(registrationState value: UInt32) -> Bool? {
    switch value {
    case 5, 7, 10: true
    case 1, 6, 9: false
    default: nil
    }
  }

  /// Records what one modem object holds (its interfaces and their properties, as
  /// `GetManagedObjects` lists them) for the interfaces of its bearers, `bearerInterfaces`.
  mutating func add(modem interfaces: [String: [String: BusValue]], bearerInterfaces: [String]) {
    guard case .uint32(let state)? = interfaces[Self.modem3gppInterface]?["RegistrationState"],
      let roaming = Self.roaming(registrationState: state)
    else { return }
    for name in bearerInterfaces where !name.isEmpty { self.roaming[name] = roaming }
  }

  /// The bearer object paths of a modem object (`Modem.Bearers`).
  static func bearers(of interfaces: [String: [String: BusValue]]) -> [String] {
    guard case .objectPaths(let paths)? = interfaces[modemInterface]?["Bearers"] else { return [] }
    return paths
  }

  /// Reads `GetManagedObjects` at ``rootPath``, then the `Interface` of each registered modem's
  /// bearers (asked together), all before `calls`' deadline, and hands the snapshot to `done`.
  /// A bearer that vanished meanwhile is skipped; no answer in time is a
  /// ``BusError/isTimeout`` failure.
  static func read(
    with calls: BusReadCalls, done: @escaping (Result<ModemManagerSnapshot, BusError>) -> Void
  ) {
    let finish = calls.once(done)
    let managedObjects = { (reply: BusMessage) throws(BusError) in try reply.managedObjects() }
    calls.ask(
      service, rootPath, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", [],
      read: managedObjects
    ) { answer in
      let objects: [String: [String: [String: BusValue]]]
      switch answer {
      case .failure(let error): return finish(.failure(error))
      case .success(let read): objects = read
      }
      let modems = objects.keys.sorted().compactMap { path -> [String: [String: BusValue]]? in
        let modem = objects[path]!
        return modem[modem3gppInterface] != nil ? modem : nil
      }
      // Bearer interface names, taken in each modem's order once all came.
      func snapshot(_ names: [String: String]) -> ModemManagerSnapshot {
        var snapshot = ModemManagerSnapshot()
        for modem in modems {
          snapshot.add(modem: modem, bearerInterfaces: bearers(of: modem).compactMap { names[$0] })
        }
        return snapshot
      }
      let asked = modems.flatMap { bearers(of: $0) }
      guard !asked.isEmpty else { return finish(.success(snapshot([:]))) }
      var names: [String: String] = [:]
      var left = asked.count
      for bearer in asked {
        calls.allProperties(service, bearer, bearerInterface) { answer in
          switch answer {
          case .success(let properties):
            if case .string(let name)? = properties["Interface"] { names[bearer] = name }
          case .failure(let error) where error.isTimeout: return finish(.failure(error))
          case .failure: break  // vanished meanwhile
          }
          left -= 1
          if left == 0 { finish(.success(snapshot(names))) }
        }
      }
    }
  }
}
