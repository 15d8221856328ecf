import GRDB
import GRDBSQLite

extension Statement {
  /// Runs this (cached) statement once with the values `bind` gives it, through SQLite's C
  /// API. For the writer's hot statements only: it skips GRDB's argument validation, so the
  /// caller binds every parameter.
  func run(in db: Database, _ bind: ((Int32, DatabaseValue) -> Void) -> Void) throws {
    let handle = sqliteStatement
    sqlite3_reset(handle)
    sqlite3_clear_bindings(handle)
    bind { index, value in
      switch value.storage {
      case .null: sqlite3_bind_null(handle, index)
      case .int64(let integer): sqlite3_bind_int64(handle, index, integer)
      case .double(let double): sqlite3_bind_double(handle, index, double)
      case .string(let string):
        // A `String` passed as `const char *` is copied into a new C string first (`utf8CString`:
        // an allocation per bound text, a twentieth of the commit thread's samples in the
        // dispatch benchmark); a native string's UTF-8 is bound in place, with its length.
        // An empty one takes the copying path: its storage may have no address, and a NULL
        // pointer would bind NULL.
        let bound = string.utf8.withContiguousStorageIfAvailable { text in
          text.withMemoryRebound(to: CChar.self) { text -> Bool in
            guard let start = text.baseAddress, !text.isEmpty else { return false }
            sqlite3_bind_text(handle, index, start, Int32(text.count), transient)
            return true
          }
        }
        if bound != true {
          sqlite3_bind_text(handle, index, string, Int32(string.utf8.count), transient)
        }
      case .blob(let data) where data.isEmpty:
        // A NULL pointer would bind NULL, not an empty blob.
        sqlite3_bind_zeroblob(handle, index, 0)
      case .blob(let data):
        data.withUnsafeBytes { bytes in
          _ = sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), transient)
        }
      }
    }
    let code = sqlite3_step(handle)
    sqlite3_reset(handle)
    sqlite3_clear_bindings(handle)
    guard code == SQLITE_DONE else {
      throw DatabaseError(
        resultCode: ResultCode(rawValue: code),
        message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: sql)
    }
  }
}

/// `SQLITE_TRANSIENT`: SQLite copies the bound text or blob before the call returns.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
