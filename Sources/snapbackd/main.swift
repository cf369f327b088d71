// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackDaemon
import SnapbackStore

// parse → set up → run → clean up; everything else lives in SnapbackDaemon.
exit(
    Daemon.main(arguments: CommandLine.arguments) { context in
        // Bookmarks and watched breaks in <state dir>/snapback.db. The writer thread hands its results back
        // through context.post; the service closes the store in its shutdown (final bookmarks committed).
        let logger = context.logger
        let post = context.post
        let store = SQLiteViewerStateStore(
            directory: context.options.stateDirectory, configuration: context.configuration.storeConfiguration,
            post: { post.post($0) },
            log: { level, message in
                switch level {
                case .error: logger.error(message)
                case .warning: logger.warning(message)
                case .notice: logger.notice(message)
                case .info: logger.info(message)
                case .debug: logger.debug(message)
                }
            })
        logger.info("viewer state: \(store.description)")
        return TimelineService(context: context, store: store)
    })
