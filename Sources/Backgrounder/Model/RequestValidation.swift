extension WorkRequest {
  /// Why this request cannot be scheduled, or `nil` when it can.
  func problem(minimumPeriodicInterval: Duration) -> RejectionReason? {
    if input.hasEmptyKey { return .emptyInputKey }
    switch self {
    case .oneTime(let request):
      if request.initialDelay < .zero { return .invalidInitialDelay }
      if request.budget <= .zero { return .invalidBudget }
      if let problem = request.backoff.problem { return .invalidBackoff(problem) }
    case .periodic(let request) where request.calendar != nil:
      if request.calendar?.events.isEmpty ?? true { return .invalidCalendar }
      if request.budget <= .zero { return .invalidBudget }
      if let problem = request.backoff.problem { return .invalidBackoff(problem) }
    case .periodic(let request):
      if request.interval < minimumPeriodicInterval {
        return .intervalTooShort(minimum: minimumPeriodicInterval)
      }
      if let flex = request.flexWindow, flex <= .zero || flex >= request.interval {
        return .invalidFlexWindow
      }
      if request.budget <= .zero { return .invalidBudget }
      if let problem = request.backoff.problem { return .invalidBackoff(problem) }
    }
    return nil
  }

  var input: WorkInput {
    switch self {
    case .oneTime(let request): request.input
    case .periodic(let request): request.input
    }
  }
}
