import Backgrounder

/// A job's egress bandwidth cap in the config: `bandwidth = "2Mbit"` (always),
/// `metered-bandwidth = "500kbit"` (while the primary link is metered; instead of `bandwidth`
/// then) and `bandwidth-required = true` (the job waits rather than run uncapped when the daemon
/// cannot enforce the cap), read into the library's ``BandwidthCap`` (the job's
/// `WorkConstraints.bandwidth`).
extension BandwidthCap {
  /// The lowest rate accepted (1 KB/s: HTB cannot shape usefully below it).
  static let minimumRate: UInt64 = 8_000
  /// The highest rate accepted (HTB's 32-bit rate field in bytes per second holds ~34 Gbit/s).
  static let maximumRate: UInt64 = 32_000_000_000

  /// Parses `"2Mbit"`, `"500kbit"`, `"1.5Mbit"`, `"100Gbit"` … (`bit`, `kbit`, `Mbit`, `Gbit`;
  /// the prefix letter in either case, as `tc` reads it) into bits per second.
  package static func parseRate(_ text: String) throws(BandwidthError) -> UInt64 {
    let units: [(String, Double)] = [
      ("kbit", 1e3), ("mbit", 1e6), ("gbit", 1e9), ("bit", 1),
    ]
    let lowered = text.lowercased()
    guard let (unit, factor) = units.first(where: { lowered.hasSuffix($0.0) }) else {
      let hint =
        ["kb", "mb", "gb", "bps", "b/s"].contains(where: lowered.hasSuffix)
        ? " (bytes are not accepted: write bits, such as \"16Mbit\" for 2 MB/s)" : ""
      throw BandwidthError(
        "expected a rate in bits per second such as \"2Mbit\" or \"500kbit\" (units bit, kbit, "
          + "Mbit, Gbit), got \"\(text)\"" + hint)
    }
    let number = text.dropLast(unit.count)
    guard !number.isEmpty, number.allSatisfy({ $0.isNumber || $0 == "." }),
      let value = Double(number), value.isFinite
    else {
      throw BandwidthError(
        "expected a number before \"\(text.suffix(unit.count))\", such as \"2Mbit\", got \"\(text)\""
      )
    }
    let bits = (value * factor).rounded()
    guard bits >= Double(minimumRate), bits <= Double(maximumRate) else {
      throw BandwidthError("\"\(text)\" is out of range: a cap is between 8kbit and 32Gbit")
    }
    return UInt64(bits)
  }

  /// `rate` as a config value: `"2Mbit"`, `"500kbit"`, `"1500bit"`.
  package static func format(_ rate: UInt64) -> String {
    for (unit, factor) in [("Gbit", UInt64(1_000_000_000)), ("Mbit", 1_000_000), ("kbit", 1000)]
    where rate >= factor && rate % factor == 0 {
      return "\(rate / factor)\(unit)"
    }
    return "\(rate)bit"
  }
}

/// A bandwidth value that could not be read.
package struct BandwidthError: Error, CustomStringConvertible {
  package let description: String
  init(_ description: String) { self.description = description }
}

/// Reads `bandwidth`, `metered-bandwidth` and `bandwidth-required` of a `[[job]]`.
enum BandwidthSettings {
  static let keys = ["bandwidth", "metered-bandwidth", "bandwidth-required"]

  static func read(_ job: TableReader) throws(ConfigurationError) -> BandwidthCap? {
    var cap = BandwidthCap()
    for (key, path) in [("bandwidth", \BandwidthCap.rate), ("metered-bandwidth", \.meteredRate)] {
      guard let text = try job.string(key) else { continue }
      do {
        cap[keyPath: path] = try BandwidthCap.parseRate(text)
      } catch {
        throw job.error(key, error.description)
      }
    }
    cap.required = try job.bool("bandwidth-required") ?? false
    if cap.required, cap.rate == nil, cap.meteredRate == nil {
      throw job.error(
        "bandwidth-required", "needs `bandwidth` or `metered-bandwidth` (the cap it requires)")
    }
    return cap == BandwidthCap() ? nil : cap
  }
}
