import BackgrounderDaemon
import Foundation
import Testing

@Suite struct DoctorTests {
  /// A temp directory with a config file and a fake sysfs holding `interfaces`.
  private struct Scene {
    let root: URL
    var configPath: String { root.appendingPathComponent("config.toml").path }
    var sysfs: String { root.appendingPathComponent("sys").path }

    init(config: String, interfaces: [String]) throws {
      root = FileManager.default.temporaryDirectory
        .appendingPathComponent("doctor-\(UUID().uuidString)")
      for name in interfaces {
        try FileManager.default.createDirectory(
          atPath: "\(root.path)/sys/class/net/\(name)", withIntermediateDirectories: true)
      }
      try FileManager.default.createDirectory(
        atPath: "\(root.path)/sys/class/power_supply", withIntermediateDirectories: true)
      try config.replacingOccurrences(of: "ROOT", with: root.path)
        .write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    func doctor(units: [String] = []) -> [DoctorFinding] {
      Doctor(
        configPath: configPath, sysfsRoot: sysfs, searchPath: "/usr/bin:/bin", unitPaths: units
      )
      .run()
    }
  }

  @Test func healthyConfigHasNoProblems() throws {
    let scene = try Scene(
      config: """
        [store]
        path = "ROOT/state/state.sqlite"
        [network]
        metered = ["wwan*"]
        [[job]]
        id = "dev.example.ok"
        command = ["true"]
        once = true
        """, interfaces: ["eth0", "wwan0"])
    let findings = scene.doctor()
    #expect(findings.allSatisfy { $0.severity != .problem }, "\(findings)")
    #expect(findings.contains { $0.subject == "network.metered" && $0.message.contains("wwan0") })
  }

  @Test func reportsEveryProblemItCanSee() throws {
    let scene = try Scene(
      config: """
        [store]
        path = "ROOT/config.toml/state.sqlite"
        [network]
        unmetered = ["ppp-dsl*"]
        [[job]]
        id = "dev.example.missing"
        command = ["definitely-not-a-program-xyz"]
        once = true
        [[job]]
        id = "dev.example.absolute"
        command = ["/nonexistent/bin/tool"]
        every = "1h"
        working-directory = "/nonexistent/dir"
        """, interfaces: ["eth0"])
    let problems = scene.doctor().filter { $0.severity == .problem }.map(\.description)
    #expect(problems.contains { $0.contains("definitely-not-a-program-xyz not found in PATH") })
    #expect(problems.contains { $0.contains("/nonexistent/bin/tool does not exist") })
    #expect(problems.contains { $0.contains("working-directory /nonexistent/dir") })
    #expect(problems.contains { $0.contains("\"ppp-dsl*\" matches no interface (present: eth0)") })
    #expect(problems.contains { $0.hasPrefix("problem: store:") })
  }

  @Test func brokenConfigIsAProblemWithItsLocation() throws {
    let scene = try Scene(config: "[[job]]\nid = 3\n", interfaces: [])
    let first = try #require(scene.doctor().first)
    #expect(first.severity == .problem)
    #expect(first.message.contains("config.toml:2: job[0].id: expected a string"))
  }

  @Test func checksInstalledUnits() throws {
    let scene = try Scene(config: "", interfaces: [])
    let good = scene.root.appendingPathComponent("good.service").path
    try SystemdUnits.service(user: false, executable: "/bin/true")
      .write(toFile: good, atomically: true, encoding: .utf8)
    let bad = scene.root.appendingPathComponent("bad.service").path
    try "[Service]\nType=simple\nExecStart=/bin/true run\n"
      .write(toFile: bad, atomically: true, encoding: .utf8)
    let findings = scene.doctor(units: [good, bad, "/nonexistent.service"])
    #expect(findings.contains { $0.subject == "unit \(good)" && $0.severity == .ok })
    #expect(findings.contains { $0.subject == "unit \(bad)" && $0.message.contains("Type=notify") })
    #expect(!findings.contains { $0.subject.contains("/nonexistent.service") })
  }
}
