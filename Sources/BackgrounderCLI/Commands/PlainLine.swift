extension ArraySlice<String> {
  /// For the plain lines read without the argument parser (``PlainControlLine``,
  /// ``CalendarCommand/plainRequest(_:)``, ``StatusFastStart/plainLine(_:)``): the value of the
  /// option just read, the argument at `index` (which then moves past it), or nil when there is
  /// none or it looks like an option (the parser would not take it as the value).
  func optionValue(at index: inout Index) -> String? {
    guard index < endIndex else { return nil }
    let value = self[index]
    index += 1
    return value.hasPrefix("-") ? nil : value
  }
}
