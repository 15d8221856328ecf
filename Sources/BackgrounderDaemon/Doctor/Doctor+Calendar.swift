import Backgrounder
import Foundation

extension Doctor {
  /// A calendar job's next three elapses (as `backgrounder calendar` computes them), and
  /// whether the machine id its `fixed-random-delay` needs can be read.
  func checkCalendar(of job: JobDefinition) -> [DoctorFinding] {
    let subject = "job \(job.id)"
    guard case .calendar = job.schedule else { return [] }
    var findings: [DoctorFinding] = []
    let schedule: CalendarSchedule
    do {
      guard
        case .periodic(let request) = try JobRequests.request(
          for: job, origin: .config, machineIdPath: machineIdPath),
        let calendar = request.calendar
      else { return [] }
      schedule = calendar
    } catch {
      return [.init(.problem, subject, "\(error)")]
    }
    var elapses: [WallInstant] = []
    var after = WallInstant(now ?? Date())
    while elapses.count < 3, let next = schedule.nextElapse(after: after) {
      elapses.append(next)
      after = next
    }
    let zone = schedule.localZone
    let listed = elapses.map { CalendarTimeFormat.human($0, in: zone) }
    findings.append(
      .init(
        .ok, subject,
        elapses.isEmpty
          ? "calendar has no elapse left" : "next elapses: \(listed.joined(separator: ", "))"))
    return findings
  }
}
