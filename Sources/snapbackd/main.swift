// snapbackd: parse → set up → run → clean up; everything but the choice of service lives in
// SnapbackDaemon's `Daemon`.
import Glibc
import SnapbackDaemon
import SnapbackStore

exit(Daemon.main(arguments: CommandLine.arguments) { context in
    TimelineService(context: context, store: InMemoryViewerStateStore()).makeHandler()
})
