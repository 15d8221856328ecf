import Foundation
import Testing

@testable import Backgrounder

/// A FIFO (or a directory) where the store belongs is refused with what it is, before SQLite
/// opens it: SQLite's blocking `open` would wait forever for a writer (issue #40, finding 7).
@Suite struct StoreFifoTests {
  /// Runs `body` while a watchdog, if `body` has not returned after 20 s, opens `fifo` for
  /// writing and closes it again (repeatedly), so that a reader blocked in `open` sees end of
  /// file and the test fails on its result instead of hanging.
  private func unblocking<T>(_ fifo: String, _ body: () throws -> T) rethrows -> T {
    let finished = DispatchSemaphore(value: 0)
    let watchdog = Thread {
      if finished.wait(timeout: .now() + 20) == .success { return }
      repeat {
        let fd = open(fifo, O_WRONLY | O_NONBLOCK)
        if fd >= 0 { close(fd) }
      } while finished.wait(timeout: .now() + 0.05) == .timedOut
    }
    watchdog.start()
    defer { finished.signal() }
    return try body()
  }

  private func fifo() throws -> (directory: String, fifo: String) {
    let directory = NSTemporaryDirectory() + "store-fifo-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    let fifo = directory + "/state.sqlite"
    #expect(mkfifo(fifo, 0o600) == 0)
    return (directory, fifo)
  }

  @Test("the read-only reader (history, status) refuses a FIFO store without waiting")
  func readerRefusesAFifo() throws {
    let (directory, fifo) = try fifo()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let error = unblocking(fifo) { () -> Error? in
      do {
        _ = try TaskStoreReader(path: fifo)
        return nil
      } catch {
        return error
      }
    }
    #expect(
      "\(error.map { "\($0)" } ?? "no error")"
        == "cannot open store \(fifo): is a FIFO, not a regular file")
  }

  @Test("the writer (the runtime) refuses a FIFO or a directory as its store without waiting")
  func writerRefusesAFifoOrADirectory() throws {
    let (directory, fifo) = try fifo()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    for (path, kind) in [(fifo, "a FIFO"), (directory, "a directory")] {
      let error = unblocking(fifo) { () -> Error? in
        do {
          _ = try TaskStore.open(path: path, durability: .normal, historyLimit: 3)
          return nil
        } catch {
          return error
        }
      }
      #expect(
        "\(error.map { "\($0)" } ?? "no error")"
          == "cannot open store \(path): is \(kind), not a regular file")
    }
  }
}
