// Each condition's live source is a module of its own under Sources/Conditions/; an embedder
// that imports BackgrounderLinux sees them all, as it did when they were folders of this module.
@_exported import DestinationChecks
@_exported import Logind
@_exported import MountTable
@_exported import WallClockChanges
