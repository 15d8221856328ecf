import SystemCalls
import SystemPackage
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct SystemCallTests {
  @Test func anInterruptedCallIsRetried() throws {
    var attempts = 0
    let result = try systemCall("test") { () -> Int32 in
      attempts += 1
      guard attempts < 3 else { return 42 }
      errno = EINTR
      return -1
    }
    #expect(result == 42)
    #expect(attempts == 3)
  }

  @Test func aFailureCarriesTheOperationAndErrno() {
    #expect(throws: SystemCallError("close 12345", errno: .badFileDescriptor)) {
      try systemCall("close 12345") { close(12345) }
    }
  }

  @Test func wouldBlockIsNilOnANonBlockingDescriptor() throws {
    var ends: [Int32] = [-1, -1]
    #expect(pipe(&ends) == 0 && fcntl(ends[0], F_SETFL, O_NONBLOCK) == 0)
    defer { for end in ends { close(end) } }
    var byte: UInt8 = 0
    #expect(try nonBlockingSystemCall("read") { read(ends[0], &byte, 1) } == nil)
    var one: UInt8 = 1
    #expect(write(ends[1], &one, 1) == 1)
    #expect(try nonBlockingSystemCall("read") { read(ends[0], &byte, 1) } == 1)
  }
}
