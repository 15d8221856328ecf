import CSystemdBus
import SystemPackage

/// A D-Bus message, read in order from sd-bus's read position: a reply or a signal as the
/// callers of this package see it. Only this package calls sd-bus; callers read and write
/// messages through this type and ``BusArgument``.
///
/// Borrowed: valid while the call or callback that handed it over runs.
package struct BusMessage {
  let handle: OpaquePointer

  init(_ handle: OpaquePointer) {
    self.handle = handle
  }

  /// The object path of a signal or call (nil: none).
  package var path: String? {
    sd_bus_message_get_path(handle).map { String(cString: $0) }
  }

  /// The member (signal or method name) (nil: none).
  package var member: String? {
    sd_bus_message_get_member(handle).map { String(cString: $0) }
  }

  /// Moves the read position back to the start: a signal's handlers each read it from there.
  package func rewind() {
    sd_bus_message_rewind(handle, 1)
  }

  /// Reads an `s`.
  package func string() throws(BusError) -> String {
    try Self.string(handle, type: "s")
  }

  /// Reads a `b`.
  package func bool() throws(BusError) -> Bool {
    var value: Int32 = 0
    try read("b", &value)
    return value != 0
  }

  /// Reads a `u`.
  package func uint32() throws(BusError) -> UInt32 {
    var value: UInt32 = 0
    try read("u", &value)
    return value
  }

  /// Reads an `h`: the descriptor is the message's (duplicate it to keep it).
  package func unixFD() throws(BusError) -> Int32 {
    var value: Int32 = -1
    try read("h", &value)
    return value
  }

  /// Reads a `v`: nil when it holds a type other than `b`, `u`, `t`, `s`, `o` and `ao` (it is
  /// skipped).
  package func variant() throws(BusError) -> BusValue? {
    var type: CChar = 0
    var contents: UnsafePointer<CChar>?
    try BusConnection.check(sd_bus_message_peek_type(handle, &type, &contents))
    let signature = contents.map { String(cString: $0) } ?? ""
    guard ["b", "u", "t", "s", "o", "ao"].contains(signature) else {
      try BusConnection.check(sd_bus_message_skip(handle, "v"))
      return nil
    }
    try BusConnection.check(sd_bus_message_enter_container(handle, code("v"), signature))
    let value: BusValue
    switch signature {
    case "b": value = .bool(try bool())
    case "u": value = .uint32(try uint32())
    case "t":
      var number: UInt64 = 0
      try read("t", &number)
      value = .uint64(number)
    case "ao":
      var paths: [String] = []
      try BusConnection.check(sd_bus_message_enter_container(handle, code("a"), "o"))
      while let path = try Self.optionalString(handle, type: "o") { paths.append(path) }
      try BusConnection.check(sd_bus_message_exit_container(handle))
      value = .objectPaths(paths)
    default:
      value = .string(try Self.string(handle, type: signature))
    }
    try BusConnection.check(sd_bus_message_exit_container(handle))
    return value
  }

  /// Reads an `as`.
  package func strings() throws(BusError) -> [String] {
    try BusConnection.check(sd_bus_message_enter_container(handle, code("a"), "s"))
    var strings: [String] = []
    while let text = try Self.optionalString(handle, type: "s") { strings.append(text) }
    try BusConnection.check(sd_bus_message_exit_container(handle))
    return strings
  }

  /// Reads an `a{sv}`; values of types other than `b`, `u`, `t`, `s`, `o` and `ao` are
  /// skipped (``variant()``).
  package func dictionary() throws(BusError) -> [String: BusValue] {
    var values: [String: BusValue] = [:]
    try BusConnection.check(sd_bus_message_enter_container(handle, code("a"), "{sv}"))
    while try BusConnection.check(sd_bus_message_enter_container(handle, code("e"), "sv")) > 0 {
      let key = try string()
      if let value = try variant() { values[key] = value }
      try BusConnection.check(sd_bus_message_exit_container(handle))
    }
    try BusConnection.check(sd_bus_message_exit_container(handle))
    return values
  }

  /// Reads `PropertiesChanged(s interface, a{sv} changed, as invalidated)`.
  package func propertiesChanged() throws(BusError) -> (
    interface: String, changed: [String: BusValue], invalidated: [String]
  ) {
    (try string(), try dictionary(), try strings())
  }

  /// Reads an `a{oa{sa{sv}}}` (`GetManagedObjects`): object path → interface → properties.
  package func managedObjects() throws(BusError) -> [String: [String: [String: BusValue]]] {
    var objects: [String: [String: [String: BusValue]]] = [:]
    try BusConnection.check(sd_bus_message_enter_container(handle, code("a"), "{oa{sa{sv}}}"))
    while try BusConnection.check(
      sd_bus_message_enter_container(handle, code("e"), "oa{sa{sv}}")) > 0
    {
      let path = try Self.string(handle, type: "o")
      var interfaces: [String: [String: BusValue]] = [:]
      try BusConnection.check(sd_bus_message_enter_container(handle, code("a"), "{sa{sv}}"))
      while try BusConnection.check(sd_bus_message_enter_container(handle, code("e"), "sa{sv}"))
        > 0
      {
        let name = try string()
        interfaces[name] = try dictionary()
        try BusConnection.check(sd_bus_message_exit_container(handle))
      }
      try BusConnection.check(sd_bus_message_exit_container(handle))
      objects[path] = interfaces
      try BusConnection.check(sd_bus_message_exit_container(handle))
    }
    try BusConnection.check(sd_bus_message_exit_container(handle))
    return objects
  }

  private func read<Value: BitwiseCopyable>(_ type: Unicode.Scalar, _ value: inout Value)
    throws(BusError)
  {
    let result = withUnsafeMutablePointer(to: &value) {
      sd_bus_message_read_basic(handle, code(type), $0)
    }
    try BusConnection.check(result)
    guard result > 0 else { throw BusError(description: "missing \(type) value") }
  }

  static func string(_ message: OpaquePointer, type: String) throws(BusError) -> String {
    guard let text = try optionalString(message, type: type) else {
      throw BusError(description: "missing \(type) value")
    }
    return text
  }

  static func optionalString(_ message: OpaquePointer, type: String) throws(BusError) -> String? {
    var pointer: UnsafePointer<CChar>?
    let result = sd_bus_message_read_basic(message, CChar(bitPattern: type.utf8.first!), &pointer)
    try BusConnection.check(result)
    guard result > 0, let pointer else { return nil }
    return String(cString: pointer)
  }
}

/// An argument of a method call made through this package.
package enum BusArgument: Sendable, Equatable {
  case string(String)
  case uint32(UInt32)
  case int32(Int32)
  /// An empty array of elements of `signature` (`as`: "s", `a{sv}`: "{sv}").
  case emptyArray(String)

  /// Appends `arguments` to `message`: sd-bus's result (negative: an errno).
  static func append(_ arguments: [BusArgument], to message: OpaquePointer?) -> Int32 {
    var result: Int32 = 0
    for argument in arguments where result >= 0 {
      switch argument {
      case .string(let text): result = csd_append_string(message, text)
      case .uint32(let value):
        result = withUnsafePointer(to: value) {
          sd_bus_message_append_basic(message, code("u"), $0)
        }
      case .int32(let value):
        result = withUnsafePointer(to: value) {
          sd_bus_message_append_basic(message, code("i"), $0)
        }
      case .emptyArray(let signature):
        result = sd_bus_message_open_container(message, code("a"), signature)
        if result >= 0 { result = sd_bus_message_close_container(message) }
      }
    }
    return result
  }
}

private func code(_ character: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: character)) }
