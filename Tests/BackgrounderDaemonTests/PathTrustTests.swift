import Foundation
import Testing

@testable import BackgrounderDaemon

/// The whole-path rule on `stat` values, then the walk on real directories.
@Suite struct PathTrustRuleTests {
  private let rule = PathTrustRule(owners: .init(userIDs: [1000]), processUser: 1000)
  private let directory = FileStatus(owner: 0, mode: S_IFDIR | 0o755)

  @Test func rootAndTheUserMayOwnAncestorsNobodyElse() {
    for owner: uid_t in [0, 1000] {
      let child = FileStatus(owner: owner, mode: S_IFDIR | 0o755)
      #expect(rule.problem(entering: child, at: "/a", from: directory, at: "/") == nil)
    }
    let foreign = FileStatus(owner: 65534, mode: S_IFDIR | 0o755)
    let problem = rule.problem(entering: foreign, at: "/a", from: directory, at: "/")
    #expect("\(problem.map { "\($0)" } ?? "")".contains("/a: it is owned by uid 65534 (mode 0755)"))
  }

  @Test func aDirectoryOthersMayWriteIsRefusedUnlessStickyWithATrustedEntry() {
    let open = FileStatus(owner: 1000, mode: S_IFDIR | 0o777)
    let child = FileStatus(owner: 1000, mode: S_IFDIR | 0o700)
    let problem = rule.problem(entering: child, at: "/s/a", from: open, at: "/s")
    #expect("\(problem.map { "\($0)" } ?? "")".contains("/s: it is writable by group or others"))
    let sticky = FileStatus(owner: 0, mode: S_IFDIR | 0o1777)
    #expect(rule.problem(entering: child, at: "/tmp/a", from: sticky, at: "/tmp") == nil)
    let planted = FileStatus(owner: 65534, mode: S_IFDIR | 0o777)
    #expect(rule.problem(entering: planted, at: "/tmp/a", from: sticky, at: "/tmp") != nil)
    let groupWritable = FileStatus(owner: 0, mode: S_IFDIR | 0o775)
    #expect(rule.problem(entering: child, at: "/g/a", from: groupWritable, at: "/g") != nil)
  }

  @Test func theFinalDirectoryIsTheUsersOwnAndPrivate() {
    #expect(rule.problem(final: FileStatus(owner: 1000, mode: S_IFDIR | 0o700), at: "/d") == nil)
    #expect(rule.problem(final: FileStatus(owner: 0, mode: S_IFDIR | 0o700), at: "/d") != nil)
    #expect(rule.problem(final: FileStatus(owner: 1000, mode: S_IFDIR | 0o1777), at: "/d") != nil)
    #expect(rule.problem(final: FileStatus(owner: 1000, mode: S_IFLNK | 0o777), at: "/d") != nil)
  }
}

@Suite struct TrustedDirectoryTests {
  private let root = "/tmp/ptrust-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)

  @Test func aTrustedSymlinkAmongTheAncestorsIsFollowedTheFinalComponentNever() throws {
    defer { try? FileManager.default.removeItem(atPath: root) }
    #expect(mkdir(root, 0o700) == 0 && mkdir(root + "/real", 0o700) == 0)
    #expect(symlink(root + "/real", root + "/link") == 0)
    let directory = try TrustedDirectory.open(root + "/link/new", creating: true)
    #expect(FileManager.default.fileExists(atPath: root + "/real/new"))
    #expect(directory.pinnedPath("x").hasPrefix("/proc/self/fd/"))
    #expect(throws: PrivateDirectoryError.self) {
      try TrustedDirectory.open(root + "/link", creating: false)
    }
  }

  @Test func dotDotReturnsToTheDirectoryAlreadyCheckedAndInspectCreatesNothing() throws {
    defer { try? FileManager.default.removeItem(atPath: root) }
    #expect(mkdir(root, 0o700) == 0)
    _ = try TrustedDirectory.open(root + "/a/../b", creating: true)
    #expect(FileManager.default.fileExists(atPath: root + "/b"))
    #expect(try TrustedDirectory.inspect(root + "/c/d") == .missing(root + "/c"))
    #expect(!FileManager.default.fileExists(atPath: root + "/c"))
  }

  @Test func filesOpenedThroughThePinnedDescriptorStayInTheDirectoryAfterARename() throws {
    defer { try? FileManager.default.removeItem(atPath: root) }
    #expect(mkdir(root, 0o700) == 0 && mkdir(root + "/a", 0o700) == 0)
    let directory = try TrustedDirectory.open(root + "/a", creating: false)
    #expect(rename(root + "/a", root + "/moved") == 0 && mkdir(root + "/a", 0o700) == 0)
    close(try directory.openFile("file", flags: O_WRONLY | O_CREAT))
    #expect(FileManager.default.fileExists(atPath: root + "/moved/file"))
    #expect(!FileManager.default.fileExists(atPath: root + "/a/file"))
  }

  @Test func aFifoOrAnOversizedFileIsNotRead() throws {
    defer { try? FileManager.default.removeItem(atPath: root) }
    #expect(mkdir(root, 0o700) == 0 && mkfifo(root + "/fifo", 0o600) == 0)
    try Data(count: 100).write(to: URL(fileURLWithPath: root + "/big"))
    let directory = try TrustedDirectory.open(root, creating: false)
    #expect(throws: PrivateDirectoryError.self) {
      try BoundedFile.read("fifo", in: directory, limit: 10)
    }
    #expect(throws: PrivateDirectoryError.tooLarge(path: root + "/big", limit: 10)) {
      try BoundedFile.read("big", in: directory, limit: 10)
    }
    #expect(try BoundedFile.read("big", in: directory, limit: 100).count == 100)
  }
}
