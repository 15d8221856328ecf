/// An error from the durable store. The store never deletes or rewrites a file it cannot
/// understand: these errors leave the file as it was.
///
/// Compare ``code`` to tell errors apart (`error.code == .corrupt`); new codes may be added in
/// later versions, so do not assume the list is complete.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What went wrong.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Value: String, Hashable, Sendable {
      case corrupt, newerSchema, notABackgrounderStore, notFound, openFailed, readFailed
      case replaced, writeFailed
    }

    private let value: Value

    private init(_ value: Value) {
      self.value = value
    }

    /// The file is not a readable SQLite database, or holds a value this version cannot read.
    public static let corrupt = Code(.corrupt)
    /// The file was written by a newer version of Backgrounder (unknown schema migrations).
    public static let newerSchema = Code(.newerSchema)
    /// The file is an SQLite database that does not belong to Backgrounder.
    public static let notABackgrounderStore = Code(.notABackgrounderStore)
    /// No store exists at the path (read-only access never creates one).
    public static let notFound = Code(.notFound)
    /// The store could not be opened for another reason (permissions, locking, ...).
    public static let openFailed = Code(.openFailed)
    /// A read failed.
    public static let readFailed = Code(.readFailed)
    /// A write failed; the change it carried is not durable.
    public static let writeFailed = Code(.writeFailed)
    /// The store's path no longer names the file the runtime opened (deleted, or replaced by
    /// another file): the runtime writes nothing more, since it would reach no one.
    public static let replaced = Code(.replaced)

    /// The code's name.
    public var description: String { value.rawValue }
  }

  /// What went wrong.
  public let code: Code
  /// The store file, when the error concerns one.
  public let path: String?
  /// What the store or SQLite said.
  public let detail: String
  /// The schema migrations this version does not know (``Code/newerSchema`` only).
  public let unknownMigrations: [String]

  private init(_ code: Code, path: String?, detail: String, unknownMigrations: [String] = []) {
    self.code = code
    self.path = path
    self.detail = detail
    self.unknownMigrations = unknownMigrations
  }

  /// The file is damaged, not SQLite at all, or holds a value this version cannot read.
  public static func corrupt(path: String, detail: String) -> StoreError {
    StoreError(.corrupt, path: path, detail: detail)
  }

  /// The file was written by a newer version of Backgrounder.
  public static func newerSchema(path: String, unknownMigrations: [String]) -> StoreError {
    StoreError(
      .newerSchema, path: path, detail: unknownMigrations.joined(separator: ", "),
      unknownMigrations: unknownMigrations)
  }

  /// The file is an SQLite database that does not belong to Backgrounder.
  public static func notABackgrounderStore(path: String, detail: String) -> StoreError {
    StoreError(.notABackgrounderStore, path: path, detail: detail)
  }

  /// No store exists at `path`.
  public static func notFound(path: String) -> StoreError {
    StoreError(.notFound, path: path, detail: "")
  }

  /// The store could not be opened for another reason.
  public static func openFailed(path: String, detail: String) -> StoreError {
    StoreError(.openFailed, path: path, detail: detail)
  }

  /// A read failed.
  public static func readFailed(detail: String) -> StoreError {
    StoreError(.readFailed, path: nil, detail: detail)
  }

  /// A write failed; the change it carried is not durable.
  public static func writeFailed(detail: String) -> StoreError {
    StoreError(.writeFailed, path: nil, detail: detail)
  }

  /// The store's path no longer names the file opened at `path`; `detail` says what it names.
  public static func replaced(path: String, detail: String) -> StoreError {
    StoreError(.replaced, path: path, detail: detail)
  }

  /// This error about the file at `path`.
  func at(_ path: String) -> StoreError {
    StoreError(code, path: path, detail: detail, unknownMigrations: unknownMigrations)
  }

  /// A readable explanation naming the file and the problem.
  public var description: String {
    let path = path ?? "(unknown)"
    return switch code {
    case .corrupt:
      "store \(path) is damaged or not an SQLite database (\(detail)); it was left untouched"
    case .newerSchema:
      "store \(path) was written by a newer Backgrounder (unknown schema migrations: "
        + "\(unknownMigrations.joined(separator: ", "))); upgrade Backgrounder to open it"
    case .notABackgrounderStore:
      "\(path) is an SQLite database but not a Backgrounder store (\(detail)); it was left untouched"
    case .notFound: "no Backgrounder store at \(path)"
    case .openFailed: "cannot open store \(path): \(detail)"
    case .readFailed: "store read failed: \(detail)"
    case .writeFailed: "store write failed: \(detail)"
    case .replaced:
      "store \(path) was \(detail) while open; nothing more is written to the old file"
    default: "store error \(code) (\(path)): \(detail)"
    }
  }
}
