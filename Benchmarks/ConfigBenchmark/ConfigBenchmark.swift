import BackgrounderDaemon
import Glibc

/// Times `ConfigurationLoader.parse` on a generated config with 1,000 jobs (what `status`,
/// `doctor` and the daemon's start and reload read). Run with
/// `swift run --package-path Benchmarks -c release ConfigBenchmark [JOBS] [ROUNDS]`; prints the
/// median and spread of the wall time, and the median of the thread's CPU time (which other
/// processes on a busy machine disturb less).
@main
enum ConfigBenchmark {
  static func main() throws {
    let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
    let jobs = arguments.first ?? 1000
    let rounds = arguments.dropFirst().first ?? 50
    let text = config(jobs: jobs)
    let locations = DefaultLocations(
      configPath: "/bench/config.toml", storePath: "/bench/state.sqlite",
      controlSocketPath: "/bench/control.sock")
    let clock = ContinuousClock()
    var samples: [Duration] = []
    var cpuSamples: [Duration] = []
    for round in 0..<rounds + 3 {
      let cpuStart = threadCPUTime()
      let start = clock.now
      let configuration = try ConfigurationLoader.parse(
        text, path: "/bench/config.toml", locations: locations)
      let elapsed = clock.now - start
      let cpu = threadCPUTime() - cpuStart
      precondition(configuration.jobs.count == jobs)
      if round >= 3 {  // the first rounds warm caches up
        samples.append(elapsed)
        cpuSamples.append(cpu)
      }
    }
    samples.sort()
    cpuSamples.sort()
    func milliseconds(_ duration: Duration) -> String {
      let microseconds =
        duration.components.seconds * 1_000_000
        + duration.components.attoseconds / 1_000_000_000_000
      return "\(Double(microseconds) / 1000) ms"
    }
    print(
      "parse \(jobs) jobs (\(text.utf8.count) bytes), \(rounds) rounds: median "
        + "\(milliseconds(samples[samples.count / 2])), min \(milliseconds(samples[0])), "
        + "max \(milliseconds(samples[samples.count - 1])); CPU median "
        + "\(milliseconds(cpuSamples[cpuSamples.count / 2]))")
  }

  /// The CPU time this thread has used.
  static func threadCPUTime() -> Duration {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
  }

  /// A config with every kind of job key the README documents, `jobs` times.
  static func config(jobs: Int) -> String {
    var text = """
      [store]
      path = "/var/lib/backgrounder/state.sqlite"
      [network]
      metered = ["wlp0s20f3-hotspot*"]
      unmetered = ["ppp-dsl0"]
      [daemon]
      max-concurrent = 4

      """
    for number in 0..<jobs {
      text += """
        [[job]]
        id = "dev.example.job-\(number)"
        command = ["rclone", "sync", "/home/me/dir-\(number)", "remote:dir-\(number)"]
        every = "\(number % 23 + 1)h"
        flex = "30m"
        network = "\(number.isMultiple(of: 2) ? "unmetered" : "any")"
        requires-charging = \(number.isMultiple(of: 3))
        budget = "30m"
        backoff = { policy = "exponential", initial = "30s", max-attempts = 10 }
        environment = { RCLONE_CONFIG = "/home/me/.config/rclone/rclone.conf" }

        """
    }
    return text
  }
}
