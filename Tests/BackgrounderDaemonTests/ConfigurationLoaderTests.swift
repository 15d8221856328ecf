import BackgrounderDaemon
import Foundation
import Testing

@Suite struct ConfigurationLoaderTests {
  private let locations = DefaultLocations(
    configPath: "/cfg/config.toml", storePath: "/state/default.sqlite",
    controlSocketPath: "/run/test/control.sock")

  private func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
    try ConfigurationLoader.parse(text, path: "test.toml", locations: locations)
  }

  private func error(_ text: String) -> ConfigurationError? {
    do {
      _ = try parse(text)
      return nil
    } catch {
      return error
    }
  }

  @Test func readsTheShippedExample() throws {
    let configuration = try ConfigurationLoader.load(
      path: FixturePaths.config("example.toml"), locations: locations)
    #expect(configuration.storePath == "/var/lib/backgrounder/state.sqlite")
    #expect(configuration.meteredInterfaces == ["wlp0s20f3-hotspot*"])
    #expect(configuration.unmeteredInterfaces == ["ppp-dsl0"])
    #expect(
      configuration.jobs.map(\.id) == [
        "dev.example.photos-upload", "dev.example.backup", "dev.example.fetch-once",
      ])
    let photos = configuration.jobs[0]
    #expect(photos.command == ["rclone", "sync", "/home/me/Photos", "remote:photos"])
    #expect(photos.schedule == .every(.seconds(4 * 3600), flex: nil))
    #expect(photos.network == .unmetered)
    #expect(photos.requiresCharging)
    #expect(photos.budget == .seconds(1800))
    #expect(photos.backoff.policy == .exponential)
    #expect(photos.backoff.maxAttempts == 10)
    let backup = configuration.jobs[1]
    #expect(backup.schedule == .every(.seconds(86_400), flex: .seconds(7200)))
    #expect(backup.requiresBatteryNotLow)
    #expect(backup.environment == ["RESTIC_REPOSITORY": "/mnt/backup/restic"])
    #expect(configuration.jobs[2].schedule == .once(delay: .seconds(600)))
  }

  @Test func defaultsComeFromTheLocations() throws {
    let configuration = try parse("")
    #expect(configuration.storePath == "/state/default.sqlite")
    #expect(configuration.controlSocketPath == "/run/test/control.sock")
    #expect(configuration.jobs.isEmpty)
  }

  @Test func unknownKeyNamesLineAndKey() {
    let problem = error(
      """
      [[job]]
      id = "dev.example.a"
      command = ["true"]
      every = "1h"
      netwrok = "any"
      """)
    #expect(problem?.line == 5)
    #expect(problem?.key == "job[0].netwrok")
    #expect(problem?.job == "dev.example.a")
    #expect(
      problem?.description
        == "test.toml:5: job \"dev.example.a\": netwrok: unknown key; did you mean `network`?")
  }

  /// Every problem of a file in one report, each naming the job by its id and the key, with
  /// the key meant for a misspelled one.
  @Test func allProblemsOfAFileAreReportedAtOnce() {
    let problem = error(
      """
      [[job]]
      id = "dev.example.backup"
      command = ["restic", "backup"]
      calendar = "daily"
      randomized-delay = "30m"

      [[job]]
      id = "dev.example.fetch"
      command = ["true"]
      every = "1h"
      requires-chargin = true
      budget = "4x"
      """)
    let problems = problem?.problems ?? []
    #expect(problems.count == 3, "\(String(describing: problem))")
    #expect(problems.map(\.line) == [5, 11, 12])
    #expect(
      problems.map(\.job) == ["dev.example.backup", "dev.example.fetch", "dev.example.fetch"])
    #expect(
      problems.first?.description
        == "test.toml:5: job \"dev.example.backup\": randomized-delay: unknown key; "
        + "did you mean `random-delay`?")
    #expect(
      problems.dropFirst().first?.description
        == "test.toml:11: job \"dev.example.fetch\": requires-chargin: unknown key; "
        + "did you mean `requires-charging`?")
    #expect(problems.last?.message.contains("invalid duration \"4x\"") == true)
    // The description is every problem, one per line.
    #expect(problem?.description.split(separator: "\n").count == 3)
  }

  @Test func aKeyNearNothingListsEveryKnownKey() {
    let problem = error("[store]\nwhereabouts = \"/x\"\n")
    #expect(problem?.message == "unknown key; expected one of: path")
    let near = error("[store]\npaht = \"/x\"\n")
    #expect(near?.message == "unknown key; did you mean `path`?")
  }

  @Test func problemsBeyondTheLimitAreCounted() {
    let keys = (0..<(ConfigurationLoader.problemLimit + 5)).map { "unknown\($0) = 1" }
    let problem = error("[store]\n" + keys.joined(separator: "\n") + "\n")
    #expect(problem?.problems.count == ConfigurationLoader.problemLimit)
    #expect(problem?.omitted == 5)
    #expect(
      problem?.description.hasSuffix("5 more problem(s) not shown; fix these and check again")
        == true)
  }

  @Test func anAbstractControlSocketNameIsRefused() {
    let problem = error(
      """
      [control]
      socket = "@backgrounder"
      """)
    #expect(problem?.key == "control.socket")
    #expect(problem?.description.contains("abstract socket names") == true)
  }

  @Test func badDurationNamesLineAndKey() {
    let problem = error(
      """
      [[job]]
      id = "dev.example.a"
      command = ["true"]
      every = "1h"

      [[job]]
      id = "dev.example.b"
      command = ["true"]
      every = "4x"
      """)
    #expect(problem?.line == 9)
    #expect(problem?.key == "job[1].every")
    #expect(problem?.message.contains("invalid duration \"4x\"") == true)
  }

  @Test func duplicateIdsAreRejected() {
    let problem = error(
      """
      [[job]]
      id = "dev.example.same"
      command = ["true"]
      once = true

      [[job]]
      id = "dev.example.same"
      command = ["false"]
      once = true
      """)
    #expect(problem?.line == 7)
    #expect(problem?.key == "job[1].id")
    #expect(problem?.message.contains("duplicate job id") == true)
  }

  @Test func syntaxErrorsCarryTheParserLine() {
    let problem = error("[store]\npath = \"/tmp/x\"\n\nthis is not toml\n")
    #expect(problem?.line == 4)
    #expect(problem?.message.contains("TOML syntax error") == true)
  }

  /// toml++ (inside the TOMLKit library the TOML target replaced) aborted the process on these
  /// headers (FuzzConfig's finding): each must be a clear error naming its line instead.
  @Test(arguments: ["[.a]", "[`daemon]", "[ {x]", "[[ .job]]", "[\n"])
  func headersTheParserWouldAbortOnAreErrors(header: String) {
    let problem = error("[store]\npath = \"/tmp/x\"\n\n\(header)\n")
    #expect(problem?.line == 4)
    #expect(problem?.message.contains("a table header must start with a key") == true)
  }

  /// Brackets that only look like headers (inside strings, comments or a multi-line array) are
  /// left to the parser.
  @Test func bracketsInsideStringsCommentsAndArraysAreNotHeaders() {
    let problem = error(
      #"""
      # [.comment]
      [network]
      metered = [
        "a", # [ {
      ]
      [[job]]
      id = "dev.example.x"
      every = "1h"
      command = ["sh", "-c", """
      [[ -n "$x" ]] && echo '[.y]'
      [ {z
      """, '''
      [.w]''']
      """#)
    #expect(problem?.message.contains("a table header must start with a key") != true)
    #expect(problem == nil)
  }

  @Test func inlineTableKeysResolveToTheirLine() {
    let problem = error(
      """
      [[job]]
      id = "dev.example.a"
      command = ["true"]
      every = "1h"
      backoff = { policy = "fibonacci" }
      """)
    #expect(problem?.line == 5)
    #expect(problem?.key == "job[0].backoff.policy")
  }

  @Test(arguments: [
    ("[[job]]\nid = \"dev.example.a\"\ncommand = [\"true\"]\n", "job[0]", "needs a schedule"),
    (
      "[[job]]\nid = \"dev.example.a\"\ncommand = [\"true\"]\nevery = \"1h\"\nonce = true\n",
      "job[0].once", "not both"
    ),
    (
      "[[job]]\nid = \"dev.example.a\"\ncommand = [\"true\"]\nonce = true\nnetwork = \"wifi\"\n",
      "job[0].network", "\"none\", \"any\", \"unmetered\" or \"not-roaming\""
    ),
    (
      "[[job]]\nid = \"dev.example.a\"\ncommand = \"true\"\nonce = true\n",
      "job[0].command", "expected an array of strings, got string"
    ),
    (
      "[[job]]\nid = \"dev.example.a\"\ncommand = []\nonce = true\n",
      "job[0].command", "must name a program"
    ),
    (
      "[[job]]\nid = \"dev.example.a\"\ncommand = [\"true\"]\nevery = \"30s\"\n",
      "job[0].every", "at least 1m"
    ),
    (
      "[[job]]\nid = \"dev.example.a\"\ncommand = [\"true\"]\nevery = \"1h\"\nflex = \"2h\"\n",
      "job[0].flex", "less than `every`"
    ),
    (
      "[[job]]\nid = \"dev.example.a\"\ncommand = [\"true\"]\nonce = true\n"
        + "backoff = { max-attempts = 31 }\n",
      "job[0].backoff.max-attempts", "between 1 and 30"
    ),
    ("[[job]]\ncommand = [\"true\"]\nonce = true\n", "job[0].id", "missing"),
    (
      "[[job]]\nid = \"dev.example.a\"\ncommand = [\"true\"]\nonce = true\n"
        + "environment = { \"A=B\" = \"x\" }\n",
      "job[0].environment", "invalid variable name \"A=B\""
    ),
    // `=` followed by a combining mark is one Character but still the byte execve splits on.
    (
      "[[job]]\nid = \"dev.example.a\"\ncommand = [\"true\"]\nonce = true\n"
        + "environment = { OK = \"x\", \"A=\u{338}B\" = \"x\" }\n",
      "job[0].environment", "invalid variable name \"A=\u{338}B\""
    ),
    (
      "[[job]]\nid = \"dev.example.a\"\ncommand = [\"true\"]\nonce = true\n"
        + "environment = { \"A\\u0000B\" = \"x\" }\n",
      "job[0].environment", "invalid variable name"
    ),
    // Of several unknown keys, each is reported, in file order.
    (
      "[[job]]\nid = \"dev.example.a\"\ncommand = [\"true\"]\nonce = true\nzz = 1\naa = 2\n",
      "job[0].zz", "unknown key"
    ),
    (
      "[[job]]\nid = \"dev.example.a\"\ncommand = [\"true\"]\nevery = \"1H\"\n",
      "job[0].every", "invalid duration \"1H\""
    ),
    (
      "[[job]]\nid = \"dev.example.a\"\ncommand = [\"true\"]\nonce = true\n"
        + "inherit-environment = \"yes\"\n",
      "job[0].inherit-environment", "expected true or false"
    ),
    ("[store]\npath = 3\n", "store.path", "expected a string, got integer"),
    ("[network]\nmetered = [\"a\", 2]\n", "network.metered[1]", "expected a string"),
    ("[surprise]\n", "surprise", "unknown key"),
  ])
  func invalidValuesAreExplained(text: String, key: String, fragment: String) {
    let problem = error(text)
    #expect(problem?.key == key)
    #expect(problem?.message.contains(fragment) == true, "\(String(describing: problem))")
  }

  /// toml++ aborted the process on this value too (FuzzConfig, after 400 s).
  @Test func aValueTheOldParserAbortedOnIsAnErrorNamingLineAndColumn() {
    let problem = error("[store]\npath = \"/tmp/x\"\nx = [ }\n")
    #expect(problem?.line == 3)
    #expect(
      problem?.description.hasPrefix("test.toml:3:7: TOML syntax error: expected a value") == true,
      "\(String(describing: problem))")
  }

  @Test func invalidUTF8InTheFileIsASyntaxErrorNamingItsPlace() throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("config-utf8-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("config.toml")
    try Data("[store]\npath = \"/tmp/".utf8 + [0xFF] + "\"\n".utf8).write(to: file)
    var problem: ConfigurationError?
    do {
      _ = try ConfigurationLoader.load(path: file.path, locations: locations)
    } catch {
      problem = error
    }
    #expect(
      problem?.description == "\(file.path):2:14: TOML syntax error: invalid UTF-8 (byte 0xFF)")
  }

  @Test func missingFileIsAClearError() {
    #expect(throws: ConfigurationError.self) {
      try ConfigurationLoader.load(path: "/nonexistent/backgrounder.toml")
    }
    #expect(
      loadError("/nonexistent/backgrounder.toml")
        == "/nonexistent/backgrounder.toml: cannot open: No such file or directory")
  }

  @Test("a directory, a device or a FIFO is refused as not a regular file, without a wait")
  func nonRegularFilesAreRefused() throws {
    let fifo = FileManager.default.temporaryDirectory.path + "/config-fifo-\(getpid())"
    #expect(mkfifo(fifo, 0o600) == 0)
    defer { unlink(fifo) }
    for (path, kind) in [
      ("/tmp", "a directory"), ("/dev/null", "a character device"), (fifo, "a FIFO"),
    ] {
      #expect(loadError(path) == "\(path): is \(kind), not a regular file")
    }
  }

  private func loadError(_ path: String) -> String? {
    do {
      _ = try ConfigurationLoader.load(path: path, locations: locations)
      return nil
    } catch {
      return error.description
    }
  }
}
