import Backgrounder
import Foundation
import Testing

/// Public errors are structs with a `code`, so later versions can add codes without breaking
/// callers; callers tell errors apart by comparing codes.
@Suite(.timeLimit(.minutes(3)))
struct ErrorCodeTests {
  @Test("each error carries a comparable code and what it concerns")
  func codes() {
    let duplicate = RegistrationError.duplicate(id("test.errors.a"))
    #expect(duplicate.code == .duplicate)
    #expect(duplicate.taskId == id("test.errors.a"))
    #expect(duplicate != RegistrationError.duplicate(id("test.errors.b")))
    #expect(RegistrationError.noTaskIds.code != RegistrationError.alreadyStarted.code)
    #expect(RegistrationError.duplicateFallback.taskId == nil)
    #expect(LifecycleError.shutDown.code == .shutDown)
    #expect(LifecycleError.notStarted.code != .shutDown)

    let tooLong = TaskIdError.tooLong(length: 129)
    #expect(tooLong.code == .tooLong && tooLong.length == 129)
    #expect(TaskIdError.invalidCharacter("/").character == "/")

    let corrupt = StoreError.corrupt(path: "/data/x.sqlite", detail: "bad page")
    #expect(corrupt.code == .corrupt && corrupt.path == "/data/x.sqlite")
    #expect(corrupt.detail == "bad page")
    let newer = StoreError.newerSchema(path: "/x", unknownMigrations: ["v9"])
    #expect(newer.code == .newerSchema && newer.unknownMigrations == ["v9"])
    #expect(StoreError.writeFailed(detail: "disk full").path == nil)

    let rejection = RejectionReason.intervalTooShort(minimum: .seconds(60))
    #expect(rejection.code == .intervalTooShort && rejection.minimum == .seconds(60))
    #expect(rejection != RejectionReason.intervalTooShort(minimum: .seconds(30)))
    #expect(RejectionReason.emptyInputKey.code == .emptyInputKey)
    #expect(RejectionReason.invalidBackoff("why").detail == "why")
  }

  @Test("codes print their stable names")
  func codeNames() {
    #expect("\(StoreError.Code.corrupt)" == "corrupt")
    #expect("\(StoreError.Code.notABackgrounderStore)" == "notABackgrounderStore")
    #expect("\(RegistrationError.Code.noTaskIds)" == "noTaskIds")
    #expect("\(LifecycleError.Code.notStarted)" == "notStarted")
    #expect("\(TaskIdError.Code.emptyLabel)" == "emptyLabel")
  }

  @Test("descriptions name the problem")
  func descriptions() {
    #expect("\(RegistrationError.duplicate(id("test.errors.a")))".contains("test.errors.a"))
    #expect("\(TaskIdError.tooLong(length: 130))".contains("130"))
    #expect("\(TaskIdError.invalidCharacter("/"))".contains("'/'"))
    #expect("\(StoreError.notFound(path: "/nowhere"))" == "no Backgrounder store at /nowhere")
    #expect(
      "\(StoreError.newerSchema(path: "/x", unknownMigrations: ["v9", "v10"]))".contains("v9, v10"))
  }

  @Test("catch sites match on the code")
  func catching() async throws {
    do {
      _ = try TaskId("nodot")
      Issue.record("accepted an id without a dot")
    } catch  where error.code == .missingDot {
    } catch {
      Issue.record("unexpected \(error)")
    }

    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    try Data("not a database, not at all".utf8).write(to: URL(fileURLWithPath: path))
    do {
      try await Backgrounder(storePath: path).start()
      Issue.record("started on a file that is not a store")
    } catch let error as StoreError where error.code == .corrupt {
      #expect(error.path == path)
    }
  }
}
