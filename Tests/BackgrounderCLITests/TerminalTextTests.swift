import Foundation
import Testing

@testable import BackgrounderCLI

/// What leaves for the terminal: control characters as visible escapes; and `logs`' journal
/// match, which names the daemon's user as well as the job.
struct TerminalTextTests {
  @Test func controlCharactersBecomeVisibleEscapes() {
    let osc52 = "\u{1B}]52;c;aGFja2Vk\u{07}"
    #expect(TerminalText.escaped("a\(osc52)b") == "a\\x1b]52;c;aGFja2Vk\\x07b")
    #expect(TerminalText.escaped("\u{9B}31m\u{7F}\r") == "\\x9b31m\\x7f\\r")
    #expect(TerminalText.escaped("evil\u{202E}txt.exe") == "evil\\u{202E}txt.exe")
    // Whole output: the layout's newlines and tabs stay, and so do backslashes and emoji.
    #expect(TerminalText.escaped("a\n\tb\\c 👩‍💻 é") == "a\n\tb\\c 👩‍💻 é")
    // One field: newlines, tabs and backslashes escaped too.
    #expect(TerminalText.escaped("a\n\tb\\c", keepingLines: false) == "a\\n\\tb\\\\c")
    #expect(TerminalText.escaped("eth0", keepingLines: false) == "eth0")
  }

  @Test func logsMatchesTheDaemonsUserAsWellAsTheJob() {
    let user = LogsCommand.journalctlArguments(
      job: "dev.example.backup", follow: true, userID: 1000)
    #expect(
      user == [
        "BACKGROUNDER_JOB=dev.example.backup", "_UID=0", "_UID=1000", "--no-pager",
        "--output=short-iso", "--follow",
      ])
    let root = LogsCommand.journalctlArguments(job: "dev.example.backup", follow: false, userID: 0)
    #expect(
      root == ["BACKGROUNDER_JOB=dev.example.backup", "_UID=0", "--no-pager", "--output=short-iso"])
  }

  @Test func logsMatchesTheRunningDaemonsUserAndUnit() {
    let system = JournalIdentity(uid: 0, unit: "backgrounder.service")
    #expect(
      LogsCommand.journalctlArguments(job: "a.b", follow: false, userID: 1000, daemon: system)
        == [
          "BACKGROUNDER_JOB=a.b", "_UID=0", "_SYSTEMD_UNIT=backgrounder.service", "--no-pager",
          "--output=short-iso",
        ])
    let user = JournalIdentity(uid: 1000, unit: "backgrounder.service", isUserUnit: true)
    #expect(
      LogsCommand.journalctlArguments(job: "a.b", follow: false, userID: 1000, daemon: user)
        == [
          "BACKGROUNDER_JOB=a.b", "_UID=1000", "_SYSTEMD_USER_UNIT=backgrounder.service",
          "--no-pager", "--output=short-iso",
        ])
    let plain = JournalIdentity(uid: 1000)
    #expect(
      LogsCommand.journalctlArguments(job: "a.b", follow: false, userID: 0, daemon: plain)
        == ["BACKGROUNDER_JOB=a.b", "_UID=1000", "--no-pager", "--output=short-iso"])
  }

  @Test func theDaemonsUnitComesFromItsCgroup() {
    let system = JournalIdentity.unit(inCgroup: "0::/system.slice/backgrounder.service/daemon\n")
    #expect(system?.name == "backgrounder.service" && system?.isUser == false)
    let user = JournalIdentity.unit(
      inCgroup: "0::/user.slice/user-1000.slice/user@1000.service/app.slice/backgrounder.service\n")
    #expect(user?.name == "backgrounder.service" && user?.isUser == true)
    #expect(
      JournalIdentity.unit(inCgroup: "0::/user.slice/user-1000.slice/session-3.scope\n") == nil)
    #expect(JournalIdentity.unit(inCgroup: "1:name=systemd:/system.slice/x.service\n") == nil)
    // This test process: whatever it is under, the owner of /proc/self is this user.
    #expect(JournalIdentity(pid: getpid())?.uid == geteuid())
  }
}
