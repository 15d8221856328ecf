import BackgrounderDaemon
import Foundation
import Testing

@Suite struct PrivateDirectoryTests {
  private let root = "/tmp/pdir-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)

  private func mode(_ path: String) -> mode_t {
    var status = stat()
    _ = lstat(path, &status)
    return status.st_mode & 0o7777
  }

  @Test func missingDirectoriesAreCreatedPrivate() throws {
    defer { try? FileManager.default.removeItem(atPath: root) }
    let previous = umask(0)  // even with a permissive umask
    defer { umask(previous) }
    try PrivateDirectory.prepare(containing: root + "/a/b/state.sqlite")
    #expect(mode(root + "/a/b") == 0o700)
    #expect(mode(root + "/a") == 0o700)
  }

  @Test func aGroupWritableDirectoryIsRefusedWithItsOwnerAndMode() throws {
    defer { try? FileManager.default.removeItem(atPath: root) }
    #expect(mkdir(root, 0o700) == 0)
    #expect(chmod(root, 0o775) == 0)
    let error = #expect(throws: PrivateDirectoryError.self) {
      try PrivateDirectory.prepare(root)
    }
    let text = error.map { "\($0)" } ?? ""
    #expect(text.contains(root) && text.contains("mode 0775") && text.contains("uid \(geteuid())"))
  }

  @Test(.enabled(if: geteuid() == 0, "needs root to chown a directory to another uid"))
  func aDirectoryOfAnotherUserIsRefused() throws {
    defer { try? FileManager.default.removeItem(atPath: root) }
    #expect(mkdir(root, 0o700) == 0)
    #expect(chown(root, 65534, 65534) == 0)
    let error = #expect(throws: PrivateDirectoryError.self) {
      try PrivateDirectory.prepare(root)
    }
    #expect("\(error.map { "\($0)" } ?? "")".contains("owned by uid 65534"))
    #expect(throws: Never.self) {
      try PrivateDirectory.check(root, owners: .init(userIDs: [65534]))
    }
  }

  @Test func aSymlinkToADirectoryIsNotFollowed() throws {
    defer { try? FileManager.default.removeItem(atPath: root) }
    #expect(mkdir(root, 0o700) == 0)
    #expect(mkdir(root + "/real", 0o700) == 0)
    #expect(symlink(root + "/real", root + "/link") == 0)
    #expect(throws: PrivateDirectoryError.self) { try PrivateDirectory.prepare(root + "/link") }
  }
}
