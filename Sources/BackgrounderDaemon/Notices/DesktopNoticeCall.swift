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
    // replaces_id 0: a new notice; no actions, no hints; expire_timeout -1: the server's.
    try call(
      "Notify", timeout: timeout,
      arguments: [
        .string(appName), .uint32(0), .string(""), .string(summary),
        .string(escapedMarkup(body)), .emptyArray("s"), .emptyArray("{sv}"), .int32(-1),
      ]
    ) { reply throws(NoticeRefusal) in
      do throws(BusError) {
        return try reply.uint32()
      } catch {
        throw NoticeRefusal(isAbsent: false, description: "Notify: the reply has no id")
      }
    }
  }

  /// `GetServerInformation`: the server's name, vendor and version (what `doctor` shows).
  static func serverInformation(timeout: Duration) throws(NoticeRefusal) -> String {
    try call("GetServerInformation", timeout: timeout, arguments: []) {
      reply throws(NoticeRefusal) in
      do throws(BusError) {
        return try [reply.string(), reply.string(), reply.string()].joined(separator: " ")
      } catch {
        throw NoticeRefusal(isAbsent: false, description: "GetServerInformation: a short reply")
      }
    }
  }

  private static func call<Result>(
    _ method: String, timeout: Duration, arguments: [BusArgument],
    read: (BusMessage) throws(NoticeRefusal) -> Result
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
}
