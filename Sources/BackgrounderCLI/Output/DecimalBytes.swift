extension Array where Element == UInt8 {
  /// Appends `value` in decimal ASCII, as `JSONEncoder` writes an integer.
  mutating func appendDecimal(_ value: Int) {
    if value < 0 { append(UInt8(ascii: "-")) }
    let start = count
    var rest = value.magnitude
    repeat {
      append(UInt8(ascii: "0") + UInt8(rest % 10))
      rest /= 10
    } while rest > 0
    self[start...].reverse()
  }
}
