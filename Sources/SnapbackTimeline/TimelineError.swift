// SPDX-License-Identifier: Apache-2.0
/// Why the timeline refused an event or a session. Each case names what was wrong; the wire layer maps
/// them to status codes (`category`) and shows `description` to the player.
public enum TimelineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A time or duration that is negative, NaN or infinite. `field` names it.
    case invalidTime(field: String, value: Double)
    /// A finite number beyond its documented range (`Limits`). `field` names it.
    case outOfRange(field: String, value: Double, limit: Limit)
    /// A playback rate that is NaN, infinite, or not allowed for the event.
    case invalidRate(Double)
    /// A break id that is empty.
    case emptyBreakId
    /// Two breaks share one id.
    case duplicateBreakId(String)
    /// A live update changed a known break that is closed (only an open break's end may change), or
    /// moved an open one.
    case closedBreakChanged(String)
    /// Two breaks overlap in stream time.
    case overlappingBreaks(String, String)
    /// A break lies beyond the content (ad rules) or the stream's end.
    case breakOutOfRange(id: String, start: Double)
    /// An event names a break the session does not have.
    case unknownBreak(String)
    /// The event is not valid in the session's current state (out of order or repeated):
    /// `event` is what arrived, `state` where the session is.
    case unexpectedEvent(event: String, state: String)
    /// The session was closed; no further events are taken.
    case sessionClosed
    /// The event does not apply to this kind of session (e.g. breaks updated on an on-demand session).
    case notSupported(String)
    /// Too many breaks in one session.
    case tooManyBreaks(limit: Int)
    /// A live session's update would take it past its limit (`SessionConfiguration.maxBreaks`).
    case sessionFull(holding: Int, limit: Int)

    /// How the error should be reported: bad input, missing thing, or wrong state.
    public enum Category: Sendable { case invalidArgument, notFound, failedPrecondition, resourceExhausted }

    public var category: Category {
        switch self {
        case .invalidTime, .outOfRange, .invalidRate, .emptyBreakId, .duplicateBreakId, .closedBreakChanged,
            .overlappingBreaks, .breakOutOfRange,
            .notSupported:
            return .invalidArgument
        case .unknownBreak:
            return .notFound
        case .unexpectedEvent, .sessionClosed:
            return .failedPrecondition
        case .tooManyBreaks, .sessionFull:
            return .resourceExhausted
        }
    }

    public var description: String {
        switch self {
        case .invalidTime(let field, let value): return "\(field) must be a finite, non-negative time (got \(value))"
        case .outOfRange(let field, let value, let limit): return "\(field) must be \(limit.text) (got \(value))"
        case .invalidRate(let r): return "invalid playback rate \(r)"
        case .emptyBreakId: return "an ad break has an empty id"
        case .duplicateBreakId(let id): return "ad break id \(id) appears twice"
        case .closedBreakChanged(let id):
            return "ad break \(id) changed: a closed break cannot change, an open one only at its start"
        case .overlappingBreaks(let a, let b): return "ad breaks \(a) and \(b) overlap"
        case .breakOutOfRange(let id, let start): return "ad break \(id) at \(Seconds(start)) lies beyond the content"
        case .unknownBreak(let id): return "no ad break with id \(id) in this session"
        case .unexpectedEvent(let event, let state): return "\(event) is not expected while \(state)"
        case .sessionClosed: return "the session is closed"
        case .notSupported(let what): return "\(what) is not supported for this session"
        case .tooManyBreaks(let limit): return "more than \(limit) ad breaks in one session"
        case .sessionFull(let holding, let limit):
            return "the session would hold \(holding) ad breaks, more than the \(limit) allowed"
        }
    }
}
