/// The daemon's metrics, as the batch carries them (Prometheus text format, what its `[metrics]`
/// textfile holds), read into samples and turned into OTLP metrics: a `counter` as a monotonic
/// sum named without its `_total` suffix (an OpenTelemetry Collector's Prometheus exporter adds
/// it back), anything else as a gauge; the labels as attributes, the `# HELP` text as the
/// description.
public struct MetricSamples {
  public struct Sample {
    var name: String
    var isCounter: Bool
    var help: String?
    var labels: [(String, String)]
    var value: Double
  }

  public var samples: [Sample] = []

  /// Reads `text`; a line that is not a sample or a `# TYPE`/`# HELP` comment is skipped.
  public init(prometheusText text: String) {
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

  /// The samples as OTLP metrics, one per name (in the order first seen), with a data point
  /// per sample.
  public var metrics: [OTLPRequests.Metric] {
    var metrics: [OTLPRequests.Metric] = []
    var index: [String: Int] = [:]
    for sample in samples {
      let name =
        sample.isCounter && sample.name.hasSuffix("_total")
        ? String(sample.name.dropLast(6)) : sample.name
      let point = (
        attributes: sample.labels.map { ($0.0, AttributeValue.string($0.1)) }, value: sample.value
      )
      if let existing = index[name] {
        metrics[existing].points.append(point)
        continue
      }
      index[name] = metrics.count
      metrics.append(
        OTLPRequests.Metric(
          name: name, description: sample.help ?? "", isCounter: sample.isCounter,
          points: [point]))
    }
    return metrics
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

  /// `\\` and `\n` in a `# HELP` text.
  private static func unescapeHelp(_ text: String) -> String {
    var result = ""
    var escaped = false
    for character in text {
      if escaped {
        result.append(character == "n" ? "\n" : character)
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else {
        result.append(character)
      }
    }
    if escaped { result.append("\\") }
    return result
  }
}
