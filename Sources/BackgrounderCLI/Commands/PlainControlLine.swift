/// A plain `trigger ID` or `expire ID` line: the job id and at most one `--config FILE` (before
/// or after it), read without the argument parser, whose whole command tree (the argument sets
/// of every verb, made to look for a completion-script request) cost a third of the verb's
/// CPU. Anything else (help, a usage error, an unknown option) is left to the parser, so its
/// messages and exit status are unchanged.
struct PlainControlLine: Equatable {
  var id: String
  var config: String?

  /// The line `arguments` (after the verb) when it is plain, else nil.
  static func parse(_ arguments: ArraySlice<String>) -> PlainControlLine? {
    var id: String?
    var config: String?
    var index = arguments.startIndex
    while index < arguments.endIndex {
      let argument = arguments[index]
      index += 1
      if argument == "--config" {
        guard config == nil, let value = arguments.optionValue(at: &index), !value.isEmpty else {
          return nil
        }
        config = value
      } else if id == nil, !argument.isEmpty, !argument.hasPrefix("-") {
        id = argument
      } else {
        return nil
      }
    }
    return id.map { PlainControlLine(id: $0, config: config) }
  }
}
