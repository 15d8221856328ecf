import CSystemShims
import EventLoops
import Foundation
import Logging
import SystemCalls
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// The control socket's listener and connections, served on an ``EventLoop``: every method
/// runs on the loop's thread (hence no locks, and `@unchecked Sendable`), never blocks, and
/// hands requests to the handler as tasks. Each connection has a deadline for its request and
/// for its answer; each peer uid a cap on open connections; each watcher a cap on the changes
/// queued for it. A client that goes away is noticed as soon as the kernel says so.
final class ControlConnections: @unchecked Sendable {
  private let listener: Int32
  private let loop: EventLoop
  private let path: String
  private let logger: Logger
  private let limits: ControlServer.Limits
  private let changes: ControlServer.Changes?
  private let handler: ControlServer.Handler
  private var listening: EventLoop.Registration?
  private var connections: [UInt64: ControlConnection] = [:]
  private var connectionsPerUser: [UInt32: Int] = [:]
  private var nextID: UInt64 = 0
  /// A spare descriptor, closed to accept (and close) a connection when the process has no
  /// descriptor left: the listener would otherwise stay readable and the loop spin.
  private var spareDescriptor: Int32 = -1
  private var refusals = RefusalLog()
  /// Set by ``stop(drained:)`` until the last connection is closed.
  private var drained: (() -> Void)?

  init(
    listener: Int32, loop: EventLoop, path: String, logger: Logger,
    limits: ControlServer.Limits, changes: ControlServer.Changes?,
    handler: @escaping ControlServer.Handler
  ) {
    self.listener = listener
    self.loop = loop
    self.path = path
    self.logger = logger
    self.limits = limits
    self.changes = changes
    self.handler = handler
  }

  /// Starts accepting; the failure of the registration, if any.
  func start() -> SystemCallError? {
    precondition(loop.isInLoop)
    spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
    do {
      listening = try loop.register(listener, interest: .readable) { [self] _ in acceptAll() }
      return nil
    } catch {
      return error
    }
  }

  /// Stops accepting and closes every connection but those whose request is with the handler
  /// or whose answer is being written: they get their answer first, each within the answer
  /// deadline (a handler that has not answered by then is cut off). A request the daemon took
  /// before it stopped is answered: "the store was replaced" reached the client that caused
  /// the stop only sometimes, when the socket closed before the handler returned (CI's soak).
  /// `drained` is called once no connection is left.
  func stop(drained: @escaping () -> Void) {
    precondition(loop.isInLoop)
    if let listening { loop.deregister(listening) }
    listening = nil
    if spareDescriptor >= 0 { Glibc.close(spareDescriptor) }
    spareDescriptor = -1
    for connection in connections.values {
      switch connection.phase {
      case .handling:
        let id = connection.id
        connection.deadline = loop.schedule(after: limits.answerDeadline) { [self] in
          if let connection = connections[id] { close(connection) }
        }
      case .answering: continue  // under its answer deadline already
      case .reading, .watching, .closing: close(connection)
      }
    }
    self.drained = drained
    closedOne()
  }

  // MARK: Accepting

  private func acceptAll() {
    for _ in 0..<64 {
      let accepted: Int32?
      do {
        accepted = try nonBlockingSystemCall("accept4") { csystem_accept_nonblocking(listener) }
      } catch {
        acceptFailed(error.errno)
        return
      }
      guard let descriptor = accepted else { return }
      admit(descriptor)
    }
  }

  private func acceptFailed(_ failure: Errno) {
    switch failure {
    case .tooManyOpenFiles, .tooManyOpenFilesInSystem:
      refusals.note("the daemon has no file descriptor left", logger: logger)
      guard spareDescriptor >= 0 else { return }
      Glibc.close(spareDescriptor)
      let connection = csystem_accept_nonblocking(listener)
      if connection >= 0 { Glibc.close(connection) }
      spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
    case .connectionAbort, .protocolError:
      break  // the client gave up before it was accepted
    default:
      refusals.note("accept failed: \(failure)", logger: logger)
    }
  }

  /// Serves a new connection, or refuses it: not our user or root, or too many of its user's.
  private func admit(_ descriptor: Int32) {
    guard let peer = try? PeerCredentials.of(descriptor) else {
      return refuse(descriptor, "cannot read peer credentials")
    }
    guard peer.isTrusted() else {
      return refuse(
        descriptor, "uid \(peer.uid) may not control a daemon running as uid \(geteuid())")
    }
    let open = connectionsPerUser[peer.uid, default: 0]
    guard open < limits.connectionsPerUser else {
      return refuse(
        descriptor, "uid \(peer.uid) has \(open) control connections open, the most allowed")
    }
    nextID += 1
    let connection = ControlConnection(id: nextID, descriptor: descriptor, uid: peer.uid)
    let id = connection.id
    do {
      connection.registration = try loop.register(descriptor, interest: .readable) {
        [self] readiness in ready(id, readiness)
      }
    } catch {
      refusals.note("cannot watch a connection: \(error)", logger: logger)
      Glibc.close(descriptor)
      return
    }
    connections[id] = connection
    connectionsPerUser[peer.uid] = open + 1
    connection.deadline = loop.schedule(after: limits.requestDeadline) { [self] in
      requestDeadlinePassed(id)
    }
  }

  /// Tells the client why (if its socket takes the line at once) and closes the connection.
  private func refuse(_ descriptor: Int32, _ reason: String) {
    refusals.note(reason, logger: logger)
    if var line = try? JSONEncoder().encode(ControlResponse(ok: false, message: reason)) {
      line.append(UInt8(ascii: "\n"))
      _ = line.withUnsafeBytes {
        send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
      }
    }
    Glibc.close(descriptor)
  }

  // MARK: One connection

  private func ready(_ id: UInt64, _ readiness: EventLoop.Readiness) {
    guard let connection = connections[id] else { return }
    if readiness.isReadable, connection.reads { read(connection) }
    if readiness.isWritable, connections[id] != nil { flush(connection) }
    if readiness.isHangUp || readiness.isError, connections[id] != nil { close(connection) }
  }

  /// Reads what the client sent: the request, or (while watching) nothing but its going away.
  private func read(_ connection: ControlConnection) {
    var chunk = [UInt8](repeating: 0, count: 4096)
    while connection.reads {
      let count: Int?
      do {
        count = try nonBlockingSystemCall("recv") {
          recv(connection.descriptor, &chunk, chunk.count, 0)
        }
      } catch {
        return close(connection)
      }
      guard let count else { return }
      guard count > 0 else { return close(connection) }  // the client went away
      guard connection.phase == .reading else { continue }  // a watcher's bytes are ignored
      switch connection.request.append(chunk[..<count]) {
      case .incomplete: continue
      case .line(let line): return handle(line, on: connection)
      case .tooLong: return answer(connection, .init(ok: false, message: "message over 256 KiB"))
      }
    }
  }

  private func handle(_ line: [UInt8], on connection: ControlConnection) {
    cancelDeadline(of: connection)
    let request: ControlRequest
    do {
      request = try JSONDecoder().decode(ControlRequest.self, from: Data(line))
    } catch {
      return answer(connection, .init(ok: false, message: "bad request: \(error)"))
    }
    if request == .watch {
      guard changes != nil else {
        return answer(
          connection, .init(ok: false, message: "this daemon does not stream task changes"))
      }
      return answer(connection, .init(ok: true, message: "watching"), thenWatch: true)
    }
    connection.phase = .handling
    updateInterest(connection)
    let id = connection.id
    Task { [handler, loop] in
      let response = await handler(request)
      loop.execute { [self] in
        if let connection = connections[id] { answer(connection, response) }
      }
    }
  }

  private func answer(
    _ connection: ControlConnection, _ response: ControlResponse, thenWatch: Bool = false
  ) {
    cancelDeadline(of: connection)
    guard var line = try? JSONEncoder().encode(response) else { return close(connection) }
    line.append(UInt8(ascii: "\n"))
    connection.phase = .answering(thenWatch: thenWatch)
    connection.output.append(line)
    let id = connection.id
    connection.deadline = loop.schedule(after: limits.answerDeadline) { [self] in
      if let connection = connections[id] { close(connection) }
    }
    flush(connection)
  }

  /// Sends what is pending; then moves on: an answered request closes, a watch starts.
  private func flush(_ connection: ControlConnection) {
    var failed = false
    connection.output.drain { bytes in
      do {
        return try nonBlockingSystemCall("send") {
          send(connection.descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
        } ?? 0
      } catch {
        failed = true
        return 0
      }
    }
    if failed { return close(connection) }
    guard connection.output.isEmpty else { return updateInterest(connection) }
    switch connection.phase {
    case .answering(let thenWatch):
      // No new watcher once the server stops (``stop(drained:)`` sets `drained`).
      if thenWatch && drained == nil { startWatching(connection) } else { close(connection) }
    case .closing:
      close(connection)
    case .reading, .handling, .watching:
      updateInterest(connection)
    }
  }

  // MARK: Watchers

  private func startWatching(_ connection: ControlConnection) {
    cancelDeadline(of: connection)
    guard let stream = changes?() else { return close(connection) }
    connection.phase = .watching
    updateInterest(connection)
    let id = connection.id
    connection.watch = Task { [loop] in
      let encoder = JSONEncoder()
      for await change in stream {
        guard var line = try? encoder.encode(change) else { continue }
        line.append(UInt8(ascii: "\n"))
        loop.execute { [self, line] in deliver(line, to: id) }
      }
      loop.execute { [self] in watchEnded(id) }
    }
  }

  private func deliver(_ line: Data, to id: UInt64) {
    guard let connection = connections[id], connection.phase == .watching else { return }
    connection.output.append(line)
    if connection.output.count > limits.watcherBacklog { return drop(connection) }
    flush(connection)
  }

  /// A watcher more than ``ControlServer/Limits/watcherBacklog`` behind: it gets one last line
  /// saying so (if it reads within the answer deadline), then the connection is closed.
  private func drop(_ connection: ControlConnection) {
    connection.watch?.cancel()
    let notice = TaskChange(
      time: ISO8601DateFormatter().string(from: Date()), task: nil, change: .error,
      detail: "this watcher fell more than \(limits.watcherBacklog) bytes behind and was "
        + "disconnected; watch again to resume")
    if var line = try? JSONEncoder().encode(notice) {
      line.append(UInt8(ascii: "\n"))
      connection.output.append(line)
    }
    logger.info("dropped a status watcher that fell behind", metadata: ["uid": "\(connection.uid)"])
    closeAfterFlush(connection)
  }

  /// The daemon's changes ended (it stops): send what is queued, then close.
  private func watchEnded(_ id: UInt64) {
    guard let connection = connections[id], connection.phase == .watching else { return }
    closeAfterFlush(connection)
  }

  private func closeAfterFlush(_ connection: ControlConnection) {
    connection.phase = .closing
    let id = connection.id
    connection.deadline = loop.schedule(after: limits.answerDeadline) { [self] in
      if let connection = connections[id] { close(connection) }
    }
    flush(connection)
  }

  // MARK: Deadlines, interest, closing

  private func requestDeadlinePassed(_ id: UInt64) {
    guard let connection = connections[id], connection.phase == .reading else { return }
    connection.deadline = nil
    let seconds = limits.requestDeadline.components.seconds
    answer(
      connection,
      .init(ok: false, message: "no complete request within \(seconds) s; nothing was done"))
  }

  private func cancelDeadline(of connection: ControlConnection) {
    if let deadline = connection.deadline { loop.cancel(deadline) }
    connection.deadline = nil
  }

  private func updateInterest(_ connection: ControlConnection) {
    let wanted = connection.wantedInterest
    guard wanted != connection.interest, let registration = connection.registration else {
      return
    }
    do {
      try loop.setInterest(registration, wanted)
      connection.interest = wanted
    } catch {
      close(connection)
    }
  }

  private func close(_ connection: ControlConnection) {
    guard connections.removeValue(forKey: connection.id) != nil else { return }
    cancelDeadline(of: connection)
    connection.watch?.cancel()
    if let registration = connection.registration { loop.deregister(registration) }
    Glibc.close(connection.descriptor)
    let open = connectionsPerUser[connection.uid, default: 1] - 1
    connectionsPerUser[connection.uid] = open > 0 ? open : nil
    closedOne()
  }

  /// Calls the stop's `drained` once the last connection is closed.
  private func closedOne() {
    guard connections.isEmpty, let drained else { return }
    self.drained = nil
    drained()
  }
}
