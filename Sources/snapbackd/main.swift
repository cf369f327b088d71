import Glibc
import SnapbackDaemon
import SnapbackStore

// parse → set up → run → clean up; everything else lives in SnapbackDaemon.
exit(Daemon.main(arguments: CommandLine.arguments) { context in
    TimelineService(context: context, store: InMemoryViewerStateStore()).makeHandler()
})
