import CSystemdBus
import DBus
import Foundation

/// Why a desktop notice was not delivered.
struct NoticeRefusal: BusCallRefusal, Sendable, Equatable, CustomStringConvertible {
  /// No session bus, or nobody owns (or can be started as) `org.freedesktop.Notifications`.
  var isAbsent: Bool
  var description: String
}

/// One blocking call to the freedesktop notification server on a session-bus connection of its
/// own, closed right after: the daemon keeps no bus connection between notices (no idle
/// wake-ups).
enum DesktopNoticeCall {
  static let destination = "org.freedesktop.Notifications"
  static let path = "/org/freedesktop/Notifications"
  static let interface = "org.freedesktop.Notifications"
  /// The `app_name` of every notice.
  static let appName = "backgrounder"

  /// `Notify(app_name, 0, "", summary, body, [], {}, -1)`; returns the server's notice id. The
  /// body is markup to the server (links, images): it goes escaped (``escapedMarkup(_:)``).
  static func notify(summary: String, body: String, timeout: Duration) throws(NoticeRefusal)
    -> UInt32
  {
    try call("Notify", timeout: timeout) { message in
      var result = csd_append_string(message, appName)
      // replaces_id 0: a new notice.
      if result >= 0 { result = appendBasic(message, "u", UInt32(0)) }
      for argument in ["", summary, escapedMarkup(body)] where result >= 0 {
        result = csd_append_string(message, argument)
      }
      if result >= 0 { result = sd_bus_message_open_container(message, code("a"), "s") }
      if result >= 0 { result = sd_bus_message_close_container(message) }
      if result >= 0 { result = sd_bus_message_open_container(message, code("a"), "{sv}") }
      if result >= 0 { result = sd_bus_message_close_container(message) }
      if result >= 0 { result = appendBasic(message, "i", Int32(-1)) }
      return result
    } read: { reply throws(NoticeRefusal) in
      var id: UInt32 = 0
      guard sd_bus_message_read_basic(reply, code("u"), &id) > 0 else {
        throw NoticeRefusal(isAbsent: false, description: "Notify: the reply has no id")
      }
      return id
    }
  }

  /// `GetServerInformation`: the server's name, vendor and version (what `doctor` shows).
  static func serverInformation(timeout: Duration) throws(NoticeRefusal) -> String {
    try call("GetServerInformation", timeout: timeout) { _ in
      0
    } read: {
      reply throws(NoticeRefusal) in
      var parts: [String] = []
      for _ in 0..<3 {
        var value: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(reply, code("s"), &value) > 0, let value else {
          throw NoticeRefusal(
            isAbsent: false, description: "GetServerInformation: a short reply")
        }
        parts.append(String(cString: value))
      }
      return parts.joined(separator: " ")
    }
  }

  private static func call<Result>(
    _ method: String, timeout: Duration,
    arguments: (OpaquePointer?) -> Int32,
    read: (OpaquePointer) throws(NoticeRefusal) -> Result
  ) throws(NoticeRefusal) -> Result {
    try BusMethodCall.call(
      on: .session, destination: destination, path: path, interface: interface,
      method: method, timeout: timeout, arguments: arguments, read: read)
  }

  /// `text` as the notification spec's body markup shows it: `&`, `<`, `>`, `"` and `'` as
  /// entities, so a job's stderr cannot add a link (`<a href=…>`) or load a file (`<img>`).
  static func escapedMarkup(_ text: String) -> String {
    guard text.contains(where: { "&<>\"'".contains($0) }) else { return text }
    var result = ""
    for character in text {
      switch character {
      case "&": result += "&amp;"
      case "<": result += "&lt;"
      case ">": result += "&gt;"
      case "\"": result += "&quot;"
      case "'": result += "&#39;"
      default: result.append(character)
      }
    }
    return result
  }

  private static func code(_ character: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: character)) }

  private static func appendBasic<Value>(
    _ message: OpaquePointer?, _ type: Unicode.Scalar, _ value: Value
  ) -> Int32 {
    withUnsafePointer(to: value) { sd_bus_message_append_basic(message, code(type), $0) }
  }
}
