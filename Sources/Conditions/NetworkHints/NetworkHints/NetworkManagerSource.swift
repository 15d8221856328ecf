import Reachability

/// The life of the NetworkManager hint source (see ``HintSourceLifecycle``): its per-link
/// hints are `Device.Metered`, and a stale answer stays while it is still starting up.
typealias NetworkManagerSource = HintSourceLifecycle<NetworkManagerSnapshot>

extension NetworkManagerSnapshot: HintSourceAnswer {
  var linkHints: [String: NetworkManagerMetered] {
    get { metered }
    set { metered = newValue }
  }
}
