import BackgrounderDaemon
import Foundation
import Locking
import Logging
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The control socket serves every connection on its own: silent, dripping, stopped and
/// departed clients delay no one, and hold no more than their limits.
@Suite struct ControlConcurrencyTests {
  /// Serves `handler` and `feed` on a fresh socket with `limits` while `body` runs.
  private func withServer(
    limits: ControlServer.Limits = .init(), feed: ChangeFeed = ChangeFeed(),
    handler: @escaping ControlServer.Handler = { _ in ControlResponse(ok: true, message: "pong") },
    _ body: (String) async throws -> Void
  ) async throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("ctl-\(UUID().uuidString.prefix(8))").path
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/control.sock"
    let server = ControlServer(
      path: path, logger: Logger(label: "test.control"), limits: limits,
      changes: { feed.subscribe() }, handler: handler)
    let running = Task { try await server.run() }
    defer { running.cancel() }
    for _ in 0..<500 where (try? await ControlClient(path: path).send(.ping)) == nil {
      try await Task.sleep(for: .milliseconds(10))
    }
    try await body(path)
    running.cancel()
    try await running.value
  }

  @Test func aSilentClientDoesNotDelayAnotherClientsRequest() async throws {
    var limits = ControlServer.Limits()
    limits.requestDeadline = .seconds(60)
    let triggered = Lock<[String]>([])
    try await withServer(limits: limits) { request in
      if case .trigger(let id) = request { triggered.withLock { $0.append(id) } }
      return ControlResponse(ok: true, message: "done")
    } _: { path in
      let silent = try RawClient(path: path)
      defer { silent.close() }
      // Connected and accepted before the second client comes (the server is at its read).
      try await Task.sleep(for: .milliseconds(50))
      let response = try await ControlClient(path: path, timeout: .seconds(1))
        .send(.trigger(id: "dev.example.a"))
      #expect(response.ok)
      #expect(triggered.withLock { $0 } == ["dev.example.a"])
      #expect(silent.isOpen(), "the silent client is still connected, unanswered")
    }
  }

  /// A client that sends its request a byte at a time: another client is answered while it
  /// still drips, and it is answered too once its line is complete.
  @Test func aDrippingClientDoesNotDelayAnotherClientsRequest() async throws {
    var limits = ControlServer.Limits()
    limits.requestDeadline = .seconds(60)
    try await withServer(limits: limits) { path in
      let dripper = try RawClient(path: path)
      defer { dripper.close() }
      let line = String(decoding: try JSONEncoder().encode(ControlRequest.ping), as: UTF8.self)
      let bytes = Array((line + "\n").utf8)
      let sent = Lock(0)
      let dripping = Task.detached {
        for byte in bytes {
          dripper.send([byte])
          sent.withLock { $0 += 1 }
          try await Task.sleep(for: .milliseconds(100))
        }
      }
      try await Task.sleep(for: .milliseconds(150))
      let response = try await ControlClient(path: path, timeout: .seconds(5))
        .send(.trigger(id: "dev.example.a"))
      #expect(response.ok)
      #expect(sent.withLock { $0 } < bytes.count, "answered before the dripper's line was complete")
      try await dripping.value
      #expect(await dripper.readToEnd().contains("\"ok\":true"), "the dripper is answered too")
    }
  }

  /// A request not complete within the deadline is answered with an error and never runs.
  @Test func anIncompleteRequestIsRefusedAtItsDeadlineAndNeverRuns() async throws {
    var limits = ControlServer.Limits()
    limits.requestDeadline = .milliseconds(200)
    let requests = Lock<[ControlRequest]>([])
    try await withServer(limits: limits) { request in
      requests.withLock { $0.append(request) }
      return ControlResponse(ok: true, message: "done")
    } _: { path in
      let before = requests.withLock { $0.count }
      let client = try RawClient(path: path)
      defer { client.close() }
      let line = String(
        decoding: try JSONEncoder().encode(ControlRequest.trigger(id: "dev.example.a")),
        as: UTF8.self)
      client.send(Array(line.utf8.dropLast()))
      let answer = await client.readToEnd()
      #expect(answer.contains("no complete request"), "\(answer)")
      client.send(Array("}\n".utf8))
      #expect(requests.withLock { $0.count } == before, "the late request was not run")
    }
  }

  /// A watcher that closes its end ends its subscription at once, not at the next change.
  @Test func aWatcherThatGoesAwayIsNoticedAtOnce() async throws {
    let feed = ChangeFeed()
    try await withServer(feed: feed) { path in
      let watcher = try RawClient(path: path)
      watcher.send(Array("{\"watch\":{}}\n".utf8))
      #expect(await watcher.readLine().contains("watching"))
      #expect(await waitUntil { feed.subscribers == 1 })
      watcher.close()
      #expect(await waitUntil { feed.subscribers == 0 }, "no change was published")
    }
  }

  /// A watcher that stops reading is told it fell behind and dropped, while others are served.
  @Test func aWatcherThatStopsReadingIsToldAndDropped() async throws {
    var limits = ControlServer.Limits()
    limits.watcherBacklog = 16 * 1024
    let feed = ChangeFeed()
    try await withServer(limits: limits, feed: feed) { path in
      let watcher = try RawClient(path: path)
      defer { watcher.close() }
      watcher.send(Array("{\"watch\":{}}\n".utf8))
      #expect(await watcher.readLine().contains("watching"))
      #expect(await waitUntil { feed.subscribers == 1 })
      let detail = String(repeating: "x", count: 1000)
      var published = 0
      while feed.subscribers > 0, published < 20_000 {
        feed.publish(TaskChange(time: "t", task: "dev.example.a", change: .started, detail: detail))
        published += 1
        if published % 100 == 0 { try await Task.sleep(for: .milliseconds(1)) }
      }
      #expect(await waitUntil { feed.subscribers == 0 }, "dropped after \(published)")
      #expect(try await ControlClient(path: path, timeout: .seconds(1)).send(.ping).ok)
      let lines = await watcher.readToEnd().split(separator: "\n")
      #expect(lines.last?.contains("fell more than 16384 bytes behind") == true)
    }
  }

  @Test func connectionsPerUserAreCapped() async throws {
    var limits = ControlServer.Limits()
    limits.connectionsPerUser = 2
    limits.requestDeadline = .seconds(60)
    try await withServer(limits: limits) { path in
      let first = try RawClient(path: path)
      let second = try RawClient(path: path)
      defer { second.close() }
      try await Task.sleep(for: .milliseconds(50))
      let refused = try await ControlClient(path: path).send(.ping)
      #expect(!refused.ok)
      #expect(refused.message.contains("the most allowed"))
      first.close()
      #expect(
        await waitUntil { (try? ControlClient(path: path).sendBlocking(.ping))?.ok == true })
    }
  }

  /// Watchers opened and closed by the client leave no descriptor behind in the daemon.
  @Test func closedWatchersLeaveNoDescriptorBehind() async throws {
    let feed = ChangeFeed()
    try await withServer(feed: feed) { path in
      let baseline = 1
      #expect(await waitUntil { Self.serverSockets(path) == baseline }, "the listener")
      for round in 0..<200 {
        let watcher = try RawClient(path: path)
        watcher.send(Array("{\"watch\":{}}\n".utf8))
        #expect(await watcher.readLine().contains("watching"))
        if round == 0 {
          // /proc/net/unix is read in pieces while other tests' sockets come and go, so one
          // read can miss a line: the count must reach the open watcher.
          #expect(
            await waitUntil { Self.serverSockets(path) == baseline + 1 },
            "an open watcher counts")
        }
        watcher.close()
      }
      #expect(
        await waitUntil { Self.serverSockets(path) <= baseline },
        "back to baseline (\(baseline)): \(Self.serverSockets(path))")
      #expect(await waitUntil { feed.subscribers == 0 }, "every subscription ended")
    }
  }

  /// The sockets bound to the server's path: its listening socket and every connection it
  /// accepted and has not closed (`/proc/net/unix`). Not the process's descriptors: the whole
  /// run's other tests open and close theirs meanwhile, and on a loaded machine libdispatch
  /// opens a timerfd of its own (CI's ThreadSanitizer step failed on it).
  private static func serverSockets(_ path: String) -> Int {
    guard let table = try? String(contentsOfFile: "/proc/net/unix", encoding: .utf8) else {
      return -1
    }
    return table.split(separator: "\n").filter { $0.hasSuffix(" \(path)") }.count
  }
}

/// Task changes published by the test to every subscribed watcher.
final class ChangeFeed: Sendable {
  private let continuations = Lock<[UUID: AsyncStream<TaskChange>.Continuation]>([:])

  var subscribers: Int { continuations.withLock { $0.count } }

  func subscribe() -> AsyncStream<TaskChange> {
    let (stream, continuation) = AsyncStream.makeStream(of: TaskChange.self)
    let id = UUID()
    continuation.onTermination = { [weak self] _ in
      _ = self?.continuations.withLock { $0.removeValue(forKey: id) }
    }
    continuations.withLock { $0[id] = continuation }
    return stream
  }

  func publish(_ change: TaskChange) {
    for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield(change) }
  }
}

/// A blocking client socket that says exactly what the test tells it to.
final class RawClient: Sendable {
  private let descriptor: Int32
  private let closed = Lock(false)

  init(path: String) throws {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    let connected = withUnixSocketAddress(path) { connect(fd, $0, $1) }
    guard fd >= 0, connected == 0 else {
      if fd >= 0 { Glibc.close(fd) }
      throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    descriptor = fd
  }

  func send(_ bytes: [UInt8]) {
    _ = bytes.withUnsafeBytes {
      Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
    }
  }

  /// Reads one byte at a time up to a newline (so nothing after it is consumed).
  func readLine() async -> String {
    await Self.offThePool { [descriptor] in
      var line: [UInt8] = []
      var byte: UInt8 = 0
      while retryingInterrupts({ recv(descriptor, &byte, 1, 0) }) == 1, byte != UInt8(ascii: "\n") {
        line.append(byte)
      }
      return String(decoding: line, as: UTF8.self)
    }
  }

  /// Everything until the server closes (or 10 s of silence).
  func readToEnd() async -> String {
    await Self.offThePool { [descriptor] in
      var all: [UInt8] = []
      var chunk = [UInt8](repeating: 0, count: 65536)
      while true {
        let count = retryingInterrupts { recv(descriptor, &chunk, chunk.count, 0) }
        guard count > 0 else { break }
        all += chunk[..<count]
      }
      return String(decoding: all, as: UTF8.self)
    }
  }

  /// Runs a blocking read on a thread of its own: the tests' concurrency pool has as many
  /// threads as CPUs, and other suites run on it meanwhile.
  private static func offThePool(_ body: @escaping @Sendable () -> String) async -> String {
    await withCheckedContinuation { continuation in
      Thread { continuation.resume(returning: body()) }.start()
    }
  }

  /// Whether the server has neither closed the connection nor written to it.
  func isOpen() -> Bool {
    var byte: UInt8 = 0
    return recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK)) < 0 && errno == EAGAIN
  }

  func close() {
    closed.withLock { closed in
      guard !closed else { return }
      closed = true
      Glibc.close(descriptor)
    }
  }

  deinit { close() }
}
