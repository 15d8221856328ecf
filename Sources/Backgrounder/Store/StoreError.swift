/// Errors from the durable store. The store never deletes or rewrites a file it cannot
/// understand: these errors leave the file as it was.
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The file is not a readable SQLite database (damaged or not SQLite at all).
  case corrupt(path: String, detail: String)
  /// The file was written by a newer version of Backgrounder (unknown schema migrations).
  case newerSchema(path: String, unknownMigrations: [String])
  /// The file is an SQLite database that does not belong to Backgrounder.
  case notABackgrounderStore(path: String, detail: String)
  /// No store exists at the path (read-only access never creates one).
  case notFound(path: String)
  /// The store could not be opened for another reason (permissions, locking, ...).
  case openFailed(path: String, detail: String)
  /// A read failed.
  case readFailed(detail: String)
  /// A write failed; the change it carried is not durable.
  case writeFailed(detail: String)

  /// A readable explanation naming the file and the problem.
  public var description: String {
    switch self {
    case .corrupt(let path, let detail):
      "store \(path) is damaged or not an SQLite database (\(detail)); it was left untouched"
    case .newerSchema(let path, let unknown):
      "store \(path) was written by a newer Backgrounder (unknown schema migrations: "
        + "\(unknown.joined(separator: ", "))); upgrade Backgrounder to open it"
    case .notABackgrounderStore(let path, let detail):
      "\(path) is an SQLite database but not a Backgrounder store (\(detail)); it was left untouched"
    case .notFound(let path): "no Backgrounder store at \(path)"
    case .openFailed(let path, let detail): "cannot open store \(path): \(detail)"
    case .readFailed(let detail): "store read failed: \(detail)"
    case .writeFailed(let detail): "store write failed: \(detail)"
    }
  }
}
