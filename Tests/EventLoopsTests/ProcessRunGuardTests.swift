import CTestSupport
import Foundation
import Testing

/// The test process's guard against Foundation's `Process.run()` over-read
/// (Tests/CTestSupport/process_run_guard.c).
@Suite struct ProcessRunGuardTests {
  /// A sanitizer's runtime intercepts `readdir` itself; the guard is left out there.
  static let unsanitized =
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") == nil
    && dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") == nil

  @Test(
    "readdir of /proc/self/fd, as libFoundation binds it, returns a whole dirent",
    .enabled(if: unsanitized, "a sanitizer's runtime intercepts readdir"))
  func procSelfFDEntriesAreWhole() {
    #expect(ctestsupport_guards_process_run() == 1)
  }

  /// Not under a sanitizer: without the guard there, Foundation's copy reads past the buffer
  /// (AddressSanitizer reports it: CI's run of this test did, 2026-11-29).
  @Test(
    "Process.run() with more than 1,400 descriptors open starts its child",
    .enabled(if: unsanitized, "the guard is left out under a sanitizer"))
  func manyDescriptors() throws {
    var descriptors: [Int32] = []
    defer { for descriptor in descriptors { close(descriptor) } }
    for _ in 0..<1_400 {
      let descriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
      guard descriptor >= 0 else { break }
      descriptors.append(descriptor)
    }
    try #require(descriptors.count == 1_400, "cannot open 1,400 descriptors")
    for _ in 0..<20 {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/bin/true")
      try process.run()
      process.waitUntilExit()
      #expect(process.terminationStatus == 0)
    }
  }
}
