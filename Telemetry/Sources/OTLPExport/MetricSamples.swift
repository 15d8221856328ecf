import CoreMetrics
import Foundation

/// The daemon's metrics, as the batch carries them (Prometheus text format, what its `[metrics]`
/// textfile holds), read into samples and recorded as OTLP metrics: a `counter` as a monotonic
/// sum named without its `_total` suffix (an OpenTelemetry Collector's Prometheus exporter adds
/// it back), anything else as a gauge; the labels as attributes, the `# HELP` text as the
/// description.
struct MetricSamples {
  struct Sample {
    var name: String
    var isCounter: Bool
    var help: String?
    var labels: [(String, String)]
    var value: Double
  }

  var samples: [Sample] = []

  /// Reads `text`; a line that is not a sample or a `# TYPE`/`# HELP` comment is skipped.
  init(prometheusText text: String) {
    var types: [String: String] = [:]
    var helps: [String: String] = [:]
    for line in text.split(separator: "\n") {
      let words = line.split(separator: " ", maxSplits: 3).map(String.init)
      if words.first == "#" {
        guard words.count >= 3 else { continue }
        let rest = words.count == 4 ? words[3] : ""
        if words[1] == "TYPE" { types[words[2]] = rest }
        if words[1] == "HELP" { helps[words[2]] = Self.unescapeHelp(rest) }
        continue
      }
      guard var sample = Self.sample(Substring(line)) else { continue }
      sample.isCounter = types[sample.name] == "counter"
      sample.help = helps[sample.name]
      samples.append(sample)
    }
  }

  /// Records every sample in `factory` (a fresh one per batch: a counter's sum is its value).
  func record(in factory: some MetricsFactory) {
    for sample in samples {
      var dimensions = sample.labels
      if let help = sample.help, !help.isEmpty { dimensions.append(("description", help)) }
      if sample.isCounter {
        let name =
          sample.name.hasSuffix("_total") ? String(sample.name.dropLast(6)) : sample.name
        factory.makeFloatingPointCounter(label: name, dimensions: dimensions)
          .increment(by: sample.value)
      } else {
        factory.makeRecorder(label: sample.name, dimensions: dimensions, aggregate: false)
          .record(sample.value)
      }
    }
  }

  /// `name{label="value",…} 1.5` or `name 1.5`.
  private static func sample(_ line: Substring) -> Sample? {
    var rest = line[...]
    let name = rest.prefix { $0 != "{" && $0 != " " }
    guard !name.isEmpty else { return nil }
    rest = rest.dropFirst(name.count)
    var labels: [(String, String)] = []
    if rest.first == "{" {
      rest = rest.dropFirst()
      while rest.first != "}" {
        let key = rest.prefix { $0 != "=" }
        rest = rest.dropFirst(key.count)
        guard rest.hasPrefix("=\"") else { return nil }
        rest = rest.dropFirst(2)
        var value = ""
        while let character = rest.first, character != "\"" {
          rest = rest.dropFirst()
          guard character == "\\", let escaped = rest.popFirst() else {
            value.append(character)
            continue
          }
          value.append(escaped == "n" ? "\n" : escaped)
        }
        guard rest.popFirst() == "\"" else { return nil }
        labels.append((String(key), value))
        if rest.first == "," { rest = rest.dropFirst() }
        guard !rest.isEmpty else { return nil }
      }
      rest = rest.dropFirst()
    }
    let fields = rest.split(separator: " ")
    guard let text = fields.first, let value = Double(text) else { return nil }
    return Sample(
      name: String(name), isCounter: false, help: nil, labels: labels, value: value)
  }

  private static func unescapeHelp(_ text: String) -> String {
    text.replacingOccurrences(of: "\\n", with: "\n").replacingOccurrences(of: "\\\\", with: "\\")
  }
}
