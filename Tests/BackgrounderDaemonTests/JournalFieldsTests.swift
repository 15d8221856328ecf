import Foundation
import Logging
import Testing

@testable import BackgrounderDaemon

/// The journal entry of a log record: the job's fields, the priority, the rest in the message;
/// and when stderr is the journal.
@Suite struct JournalFieldsTests {
  @Test func aJobLineCarriesTheJobRunAndAttemptFields() {
    let fields = JournalFields.fields(
      level: .info, message: "uploading 3 files",
      metadata: ["job": "dev.example.backup", "run": "0b1c", "attempt": "2", "stream": "stderr"],
      label: "backgrounder")
    #expect(
      fields == [
        "MESSAGE=uploading 3 files attempt=2 job=dev.example.backup run=0b1c stream=stderr",
        "PRIORITY=6",
        "SYSLOG_IDENTIFIER=backgrounder", "BACKGROUNDER_LOGGER=backgrounder",
        "BACKGROUNDER_ATTEMPT=2", "BACKGROUNDER_JOB=dev.example.backup", "BACKGROUNDER_RUN=0b1c",
      ])
    #expect(JournalFields.priority(.error) == 3 && JournalFields.priority(.warning) == 4)
    #expect(JournalFields.priority(.notice) == 5 && JournalFields.priority(.debug) == 7)
  }

  @Test func stderrIsTheJournalOnlyWhenJournalStreamNamesIt() throws {
    var status = stat()
    #expect(fstat(STDERR_FILENO, &status) == 0)
    let own = "\(status.st_dev):\(status.st_ino)"
    #expect(JournalLogHandler.isStandardErrorJournal(environment: ["JOURNAL_STREAM": own]))
    #expect(
      !JournalLogHandler.isStandardErrorJournal(
        environment: ["JOURNAL_STREAM": "\(status.st_dev):\(status.st_ino &+ 1)"]))
    #expect(!JournalLogHandler.isStandardErrorJournal(environment: [:]))
    #expect(!JournalFields.matches("garbage", device: 1, inode: 2))
  }
}
