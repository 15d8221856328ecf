import Backgrounder
import BackgrounderDaemon
import Foundation

/// libFuzzer entry: the input is what a client writes to the control socket. The daemon reads
/// up to the first newline (at most 256 KiB), decodes a `ControlRequest` and, before anything
/// reaches the runtime, parses job ids and maps scheduled jobs to runtime requests, which must
/// only succeed for jobs that pass `JobValidation`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzControl(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = UnsafeBufferPointer(start: data, count: min(size, 256 * 1024))
  let line = Data(bytes.prefix { $0 != UInt8(ascii: "\n") })
  guard let request = try? JSONDecoder().decode(ControlRequest.self, from: line) else {
    return 0
  }
  switch request {
  case .trigger(let id), .expire(let id), .cancel(let id):
    _ = try? TaskId(id)
  case .schedule(let job):
    // What the daemon schedules must obey the rules the config file and the CLI obey.
    if (try? JobRequests.request(for: job, origin: .cli)) != nil,
      let (key, message) = JobValidation.problem(with: job)
    {
      preconditionFailure("the daemon accepts a job whose \(key) \(message)")
    }
  case .ping, .reload, .health, .watch:
    break
  }
  let response = ControlResponse(ok: false, message: "bad request: \(request)")
  _ = try? JSONEncoder().encode(response)
  return 0
}
