import Glibc

/// The test hook that blocks the loop on SIGUSR1 (`stallHookVariable`), for the watchdog tests.
extension Daemon {
    /// Reads and unsets the test hook's variable; nil unless set to 1…600.
    static func takeStallHook(logger: Logger) -> UInt32? {
        guard let text = SocketActivation.environment(stallHookVariable) else { return nil }
        unsetenv(stallHookVariable)
        guard let seconds = UInt32(text), (1...600).contains(seconds) else {
            logger.warning("\(stallHookVariable)=\(text) ignored: not a number of seconds in 1...600")
            return nil
        }
        logger.warning("test hook \(stallHookVariable) is set: SIGUSR1 will block the event loop for \(seconds) s")
        return seconds
    }
}
