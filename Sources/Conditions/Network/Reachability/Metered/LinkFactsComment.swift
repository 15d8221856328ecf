/// The packet comment a capture carries for each link whose sysfs facts the classifier used,
/// so a replay on another machine classifies as the capturing machine did:
///
///     backgrounder-link-facts name=wwan0 devtype=wwan driver=qmi_wwan wireless=0 device=1
///
/// It sits on the packet holding the link's first `RTM_NEWLINK`. Values are percent-encoded
/// outside `[A-Za-z0-9._:-]`; `devtype=` / `driver=` are omitted when sysfs had none.
public enum LinkFactsComment {
  /// What every such comment starts with.
  public static let prefix = "backgrounder-link-facts "

  /// The comment describing `facts` of the link `name`.
  public static func encode(name: String, facts: LinkFacts) -> String {
    var fields = ["name=\(escape(name))"]
    if let deviceType = facts.deviceType { fields.append("devtype=\(escape(deviceType))") }
    if let driver = facts.driver { fields.append("driver=\(escape(driver))") }
    fields.append("wireless=\(facts.isWireless ? 1 : 0)")
    fields.append("device=\(facts.hasDevice ? 1 : 0)")
    return prefix + fields.joined(separator: " ")
  }

  /// The link name and facts of a comment, or `nil` when it is not one of ours (or damaged).
  public static func decode(_ comment: String) -> (name: String, facts: LinkFacts)? {
    guard comment.hasPrefix(prefix) else { return nil }
    var values: [String: String] = [:]
    for field in comment.dropFirst(prefix.count).split(separator: " ") {
      let parts = field.split(separator: "=", maxSplits: 1)
      guard parts.count == 2, let value = unescape(parts[1]) else { return nil }
      values[String(parts[0])] = value
    }
    guard let name = values["name"], !name.isEmpty else { return nil }
    return (
      name,
      LinkFacts(
        deviceType: values["devtype"], driver: values["driver"],
        isWireless: values["wireless"] == "1", hasDevice: values["device"] == "1")
    )
  }

  private static func escape(_ text: String) -> String {
    var escaped = ""
    for byte in text.utf8 {
      let scalar = Unicode.Scalar(byte)
      if byte < 0x80,
        scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
          || "._:-".unicodeScalars.contains(scalar)
      {
        escaped.unicodeScalars.append(scalar)
      } else {
        let hex = String(byte, radix: 16, uppercase: true)
        escaped += "%" + (hex.count == 1 ? "0" + hex : hex)
      }
    }
    return escaped
  }

  private static func unescape(_ text: Substring) -> String? {
    var bytes: [UInt8] = []
    var index = text.utf8.startIndex
    let utf8 = text.utf8
    while index != utf8.endIndex {
      if utf8[index] == UInt8(ascii: "%") {
        let high = utf8.index(after: index)
        guard high != utf8.endIndex, utf8.index(after: high) != utf8.endIndex,
          let value = UInt8(String(text[high..<utf8.index(high, offsetBy: 2)]), radix: 16)
        else { return nil }
        bytes.append(value)
        index = utf8.index(high, offsetBy: 2)
      } else {
        bytes.append(utf8[index])
        index = utf8.index(after: index)
      }
    }
    return String(validating: bytes, as: UTF8.self)
  }
}
