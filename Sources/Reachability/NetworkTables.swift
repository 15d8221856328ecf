import Netlink

/// The links, addresses and routes the model knows, keyed the way the kernel tells them apart.
struct NetworkTables: Sendable, Equatable {
  /// An address is identified by family, interface, prefix length and the address itself.
  struct AddressKey: Hashable, Sendable {
    var family: UInt8
    var interfaceIndex: Int32
    var prefixLength: UInt8
    var address: [UInt8]
  }

  /// A route is identified by family, table, destination, metric and first output interface,
  /// so equal-metric routes on different links stay distinct (unlike libnl's route cache).
  struct RouteKey: Hashable, Sendable {
    var family: UInt8
    var table: UInt32
    var destinationPrefixLength: UInt8
    var destination: [UInt8]
    var metric: UInt32
    var firstInterface: Int32
  }

  var links: [Int32: LinkInfo] = [:]
  var addresses: [AddressKey: AddressInfo] = [:]
  var routes: [RouteKey: RouteInfo] = [:]

  mutating func apply(_ payload: RtnetlinkMessage.Payload) {
    switch payload {
    case .link(let link, .new):
      links[link.index] = link
    case .link(let link, .delete):
      links[link.index] = nil
      removeObjects(ofLink: link.index)
    case .address(let address, .new):
      addresses[Self.key(address)] = address
    case .address(let address, .delete):
      addresses[Self.key(address)] = nil
    case .route(let route, .new):
      routes[Self.key(route)] = route
    case .route(let route, .delete):
      routes[Self.key(route)] = nil
    default:
      break
    }
  }

  /// Takes the `kind` part from `dump`, keeping the other parts.
  mutating func replace(_ kind: ObjectKind, from dump: NetworkTables) {
    switch kind {
    case .link:
      links = dump.links
      let gone = Set(addresses.values.map(\.interfaceIndex)).union(
        routes.values.flatMap(\.interfaceIndices)
      ).subtracting(links.keys)
      for index in gone { removeObjects(ofLink: index) }
    case .address:
      addresses = dump.addresses
    case .route:
      routes = dump.routes
    }
  }

  /// Empties the `kind` part.
  mutating func clear(_ kind: ObjectKind) {
    switch kind {
    case .link: links = [:]
    case .address: addresses = [:]
    case .route: routes = [:]
    }
  }

  private mutating func removeObjects(ofLink index: Int32) {
    addresses = addresses.filter { $0.value.interfaceIndex != index }
    routes = routes.filter { route in
      route.value.interfaceIndices.isEmpty || route.value.interfaceIndices.contains { $0 != index }
    }
  }

  static func key(_ address: AddressInfo) -> AddressKey {
    AddressKey(
      family: address.family, interfaceIndex: address.interfaceIndex,
      prefixLength: address.prefixLength, address: address.address)
  }

  static func key(_ route: RouteInfo) -> RouteKey {
    RouteKey(
      family: route.family, table: route.table,
      destinationPrefixLength: route.destinationPrefixLength, destination: route.destination,
      metric: route.metric, firstInterface: route.interfaceIndices.first ?? 0)
  }
}
