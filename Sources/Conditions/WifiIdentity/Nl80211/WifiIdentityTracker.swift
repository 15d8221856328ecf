/// The SSID of each Wi-Fi interface, kept from nl80211 interface replies, connect / disconnect /
/// roam events, and — when an interface reply leaves the SSID out — the associated BSS of a
/// `GET_SCAN` dump. Pure: the driver sends the re-queries and dumps it asks for.
public struct WifiIdentityTracker: Sendable, Equatable {
  /// What the driver should do after a message.
  public struct Effects: Sendable, Equatable {
    /// Interface indices whose state must be re-read with `GET_INTERFACE` (events carry the
    /// index only, and connect/roam may not carry the SSID).
    public var requery: [UInt32] = []
    /// Interfaces whose associated BSS must be read with a `GET_SCAN` dump (their interface
    /// reply had no SSID; start ``beginScan(index:)`` when sending it).
    public var scan: [UInt32] = []
    /// The SSID map changed.
    public var changed = false
  }

  private var names: [UInt32: String] = [:]
  private var ssidByIndex: [UInt32: String] = [:]
  /// Interfaces whose SSID came from a connect or roam event or the associated BSS: an
  /// interface reply without an SSID does not clear it (Linux 6.1 leaves the SSID out of a
  /// station's reply under wpa_supplicant); a disconnect, or a scan dump with no associated
  /// BSS, does.
  private var ssidFromConnection: Set<UInt32> = []
  /// `GET_SCAN` dumps being read, by interface.
  private var scans: [UInt32: Scan] = [:]

  /// What one `GET_SCAN` dump has said so far.
  private struct Scan: Sendable, Equatable {
    /// The BSS in use, when the dump has shown it.
    var inUse: Nl80211BSS?
    /// A connect, roam or disconnect event came while the dump ran: its answer may be older
    /// than the event's, and the event asks for a new one where needed.
    var overtaken = false
  }

  /// Creates an empty tracker.
  public init() {}

  /// The SSID of every associated Wi-Fi interface whose name is known, by interface name.
  public var ssids: [String: String] {
    var result: [String: String] = [:]
    for (index, ssid) in ssidByIndex {
      if let name = names[index] { result[name] = ssid }
    }
    return result
  }

  /// Applies one message.
  public mutating func apply(_ message: Nl80211Message) -> Effects {
    var effects = Effects()
    guard let index = message.interfaceIndex else { return effects }
    let before = ssids
    switch message.command {
    case .newInterface:
      if let name = message.interfaceName { names[index] = name }
      if let ssid = message.ssid {
        ssidByIndex[index] = Self.text(ssid)
      } else {
        if !ssidFromConnection.contains(index) { ssidByIndex[index] = nil }
        if message.isClientInterface { effects.scan.append(index) }
      }
      if names[index] == nil { effects.requery.append(index) }
    case .deleteInterface:
      names[index] = nil
      ssidByIndex[index] = nil
      ssidFromConnection.remove(index)
      scans[index]?.overtaken = true
    case .connect, .roam:
      if let ssid = message.ssid {
        ssidByIndex[index] = Self.text(ssid)
        ssidFromConnection.insert(index)
      }
      scans[index]?.overtaken = true
      effects.requery.append(index)
    case .disconnect:
      ssidByIndex[index] = nil
      ssidFromConnection.remove(index)
      scans[index]?.overtaken = true
    case .newScanResults:
      if let bss = message.bss, bss.isInUse { scans[index]?.inUse = bss }
    case .other:
      break
    }
    effects.changed = ssids != before
    return effects
  }

  /// Starts reading the `GET_SCAN` dump of `index` (the driver has just sent it).
  public mutating func beginScan(index: UInt32) {
    scans[index] = Scan()
  }

  /// The `GET_SCAN` dump of `index` ended: the SSID of the BSS in use becomes the interface's;
  /// with no BSS in use the interface has no SSID. Ignored when an event overtook the dump.
  public mutating func endScan(index: UInt32) -> Effects {
    var effects = Effects()
    guard let scan = scans.removeValue(forKey: index), !scan.overtaken else { return effects }
    let before = ssids
    if let bss = scan.inUse {
      if let ssid = bss.ssid {
        ssidByIndex[index] = Self.text(ssid)
        ssidFromConnection.insert(index)
      }
    } else {
      ssidByIndex[index] = nil
      ssidFromConnection.remove(index)
    }
    effects.changed = ssids != before
    return effects
  }

  /// An SSID as safe text: printable UTF-8 kept, control characters, backslashes and invalid
  /// bytes written as `\xNN` (SSIDs are 1–32 arbitrary bytes chosen by whoever runs the AP).
  static func text(_ ssid: [UInt8]) -> String {
    var result = ""
    var index = 0
    while index < ssid.count {
      let byte = ssid[index]
      if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\\") {
        result.unicodeScalars.append(Unicode.Scalar(byte))
        index += 1
        continue
      }
      if byte >= 0xC0, let scalar = decodeScalar(ssid, at: index) {
        if scalar.value >= 0xA0 && !scalar.properties.generalCategory.isControlOrFormat {
          result.unicodeScalars.append(scalar)
          index += scalar.utf8.count
          continue
        }
      }
      result += "\\x" + String(byte, radix: 16, uppercase: false).leftPadded
      index += 1
    }
    return result
  }

  private static func decodeScalar(_ bytes: [UInt8], at index: Int) -> Unicode.Scalar? {
    let length = bytes[index] >= 0xF0 ? 4 : bytes[index] >= 0xE0 ? 3 : 2
    guard index + length <= bytes.count else { return nil }
    var decoder = UTF8()
    var iterator = bytes[index..<(index + length)].makeIterator()
    guard case .scalarValue(let scalar) = decoder.decode(&iterator), scalar.utf8.count == length
    else { return nil }
    return scalar
  }
}

extension Unicode.GeneralCategory {
  fileprivate var isControlOrFormat: Bool {
    switch self {
    case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned,
      .privateUse:
      true
    default: false
    }
  }
}

extension String {
  fileprivate var leftPadded: String { count < 2 ? "0" + self : self }
}
