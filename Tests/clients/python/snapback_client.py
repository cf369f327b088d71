# SPDX-License-Identifier: Apache-2.0
"""A standard-library-only Python 3 client for snapbackd (snapback wire protocol, version 1).

Written from proto/PROTOCOL.md and proto/snapback/v1/*.proto alone, as a check that those are enough.

    with Client("/run/snapbackd.sock") as c:
        c.hello("my-player/1.0")
        opened = c.open_session(content_id="movie-42", breaks=[{"id": "b1", "start": 600.0, "duration": 60.0}])
        reply = c.call("Timeline/SeekEnded", session_id=opened.session_id,
                       from_stream_time=300.0, to_stream_time=900.0)
        for ev in c.take_pushes():          # pushes that arrived up to (and before) that reply
            print(ev.push.seq, ev.push.kind, ev.push[ev.push.kind])

Messages are `Msg` dicts (also readable as attributes). Decoding fills in every known field: scalars at
their proto3 default, absent optional scalars / sub-messages / oneof members as None, repeated as [],
and a oneof's name (e.g. Push.kind) holds the name of the member that is set, or None.
"""

import collections
import socket
import struct

# --------------------------------------------------------------------------------------------------
# Protobuf wire format (proto3 subset used by snapback, plus skipping of every unknown wire type)
# --------------------------------------------------------------------------------------------------

VARINT, I64, LEN, SGROUP, EGROUP, I32 = 0, 1, 2, 3, 4, 5
_U64 = (1 << 64) - 1


class DecodeError(ValueError):
    pass


class Msg(dict):
    """A decoded (or to-be-encoded) message: a dict whose keys are also attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def enc_varint(n):
    n &= _U64  # negative enum values: 10-byte two's complement, as protobuf does
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def dec_varint(buf, pos):
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise DecodeError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result & _U64, pos
        shift += 7
        if shift >= 70:
            raise DecodeError("varint longer than 10 bytes")


def _take(buf, pos, n):
    if pos + n > len(buf):
        raise DecodeError("truncated field: %d bytes wanted, %d left" % (n, len(buf) - pos))
    return bytes(buf[pos:pos + n]), pos + n


def read_field(buf, pos):
    """One field at pos: (number, wire type, raw value, next pos). A group is skipped whole (value None)."""
    key, pos = dec_varint(buf, pos)
    num, wt = key >> 3, key & 7
    if num == 0:
        raise DecodeError("field number 0")
    if wt == VARINT:
        val, pos = dec_varint(buf, pos)
    elif wt == I64:
        val, pos = _take(buf, pos, 8)
    elif wt == I32:
        val, pos = _take(buf, pos, 4)
    elif wt == LEN:
        n, pos = dec_varint(buf, pos)
        val, pos = _take(buf, pos, n)
    elif wt == SGROUP:  # deprecated groups: skip up to the matching end-group
        while True:
            if pos >= len(buf):
                raise DecodeError("unterminated group %d" % num)
            inner, inner_wt, _, pos = read_field(buf, pos)
            if inner_wt == EGROUP:
                if inner != num:
                    raise DecodeError("end-group %d closes group %d" % (inner, num))
                break
        val = None
    elif wt == EGROUP:
        val = None  # only valid inside a group; the caller decides
    else:
        raise DecodeError("invalid wire type %d (field %d)" % (wt, num))
    return num, wt, val, pos


# --------------------------------------------------------------------------------------------------
# Schema: snapback/v1/*.proto transcribed. "<type> <name>=<number>", prefixed by "repeated",
# "optional" (a one-field oneof `_<name>`: presence on the wire), or "oneof:<group>".
# --------------------------------------------------------------------------------------------------

_ENUMS = {  # values are consecutive from 0 in every snapback enum
    "SeekReason": "SEEK_REASON_UNSPECIFIED SEEK_REASON_SNAPBACK SEEK_REASON_RESUME_AFTER_SNAPBACK "
                  "SEEK_REASON_RESUME_FROM_BOOKMARK SEEK_REASON_BREAK_BEFORE_RESUME "
                  "SEEK_REASON_SKIP_WATCHED_BREAK SEEK_REASON_SKIP_DURING_COOLDOWN "
                  "SEEK_REASON_SKIP_DISABLED_BREAK SEEK_REASON_START_OF_BREAK SEEK_REASON_SEEK_REFUSED_DURING_AD",
    "BookmarkTrigger": "BOOKMARK_TRIGGER_UNSPECIFIED BOOKMARK_TRIGGER_PAUSED BOOKMARK_TRIGGER_CLOSED "
                       "BOOKMARK_TRIGGER_DISCONNECTED BOOKMARK_TRIGGER_SEEK BOOKMARK_TRIGGER_PERIODIC "
                       "BOOKMARK_TRIGGER_SNAPBACK_RETURN",
    "SessionKind": "SESSION_KIND_UNSPECIFIED SESSION_KIND_ON_DEMAND SESSION_KIND_LIVE",
    "MetricType": "METRIC_TYPE_UNSPECIFIED METRIC_TYPE_COUNTER METRIC_TYPE_HISTOGRAM",
    "SessionPhase": "SESSION_PHASE_UNSPECIFIED SESSION_PHASE_CONTENT SESSION_PHASE_IN_BREAK SESSION_PHASE_SEEKING "
                    "SESSION_PHASE_TRICK_PLAY SESSION_PHASE_FINISHED SESSION_PHASE_CLOSED",
    "SkippedBreakChoice": "SKIPPED_BREAK_CHOICE_UNSPECIFIED SKIPPED_BREAK_CHOICE_LAST_UNWATCHED "
                          "SKIPPED_BREAK_CHOICE_NEAREST_ONLY SKIPPED_BREAK_CHOICE_FIRST",
    "SeekGate": "SEEK_GATE_UNSPECIFIED SEEK_GATE_CROSSED_BREAKS SEEK_GATE_ALL_BREAKS_BEFORE_TARGET",
    "ReturnToTarget": "RETURN_TO_TARGET_UNSPECIFIED RETURN_TO_TARGET_IF_BEYOND_BREAK RETURN_TO_TARGET_ALWAYS "
                      "RETURN_TO_TARGET_NEVER",
    "LandingInBreak": "LANDING_IN_BREAK_UNSPECIFIED LANDING_IN_BREAK_BREAK_START LANDING_IN_BREAK_AD_START",
    "WatchedWhen": "WATCHED_WHEN_UNSPECIFIED WATCHED_WHEN_ON_BEGIN WATCHED_WHEN_ON_END WATCHED_WHEN_NEVER",
    "WatchedBreakOnPlayback": "WATCHED_BREAK_ON_PLAYBACK_UNSPECIFIED WATCHED_BREAK_ON_PLAYBACK_REPLAY "
                              "WATCHED_BREAK_ON_PLAYBACK_SKIP",
    "DecisionKind": "DECISION_KIND_UNSPECIFIED DECISION_KIND_SEEK DECISION_KIND_BREAK_WATCHED "
                    "DECISION_KIND_BREAK_COMPLETED DECISION_KIND_PLAY_BREAK DECISION_KIND_ALL_ADS_COMPLETED "
                    "DECISION_KIND_SAVE_BOOKMARK DECISION_KIND_CLEAR_BOOKMARK DECISION_KIND_BREAK_SKIPPED",
    "BreakSkipReason": "BREAK_SKIP_REASON_UNSPECIFIED BREAK_SKIP_REASON_TRICK_PLAY BREAK_SKIP_REASON_RESUME_PLAN "
                       "BREAK_SKIP_REASON_COOLDOWN BREAK_SKIP_REASON_EXEMPT BREAK_SKIP_REASON_WATCHED "
                       "BREAK_SKIP_REASON_DISABLED",
    "BreakPosition": "BREAK_POSITION_UNSPECIFIED BREAK_POSITION_PREROLL BREAK_POSITION_MIDROLL BREAK_POSITION_POSTROLL",
    "ResumeBreaks": "RESUME_BREAKS_UNSPECIFIED RESUME_BREAKS_NONE RESUME_BREAKS_PREROLL RESUME_BREAKS_LAST_BEFORE "
                    "RESUME_BREAKS_PREROLL_AND_LAST_BEFORE",
    "TrickPlaySkippedBreaks": "TRICK_PLAY_SKIPPED_BREAKS_UNSPECIFIED TRICK_PLAY_SKIPPED_BREAKS_NOT_PLAYED "
                              "TRICK_PLAY_SKIPPED_BREAKS_EVERY_PASSED",
    "TombstoneKind": "TOMBSTONE_KIND_UNSPECIFIED TOMBSTONE_KIND_DELETED TOMBSTONE_KIND_CLEARED",
}
ENUMS = {name: names.split() for name, names in _ENUMS.items()}
globals().update({value: i for names in ENUMS.values() for i, value in enumerate(names)})

_MESSAGES = {
    # status.proto
    "Status": "uint32 code=1; string message=2",
    # control.proto
    "HelloRequest": "uint32 protocol_version=1; string client_name=2",
    "HelloReply": "uint32 protocol_version=1; string server_name=2; string server_version=3; "
                  "uint32 max_frame_size=4; uint64 max_outbound_queue_bytes=5; repeated string policy_presets=6; "
                  "string default_policy_preset=7; uint32 max_breaks_per_session=8",
    "StatusRequest": "",
    "MetricsRequest": "",
    "MetricLabel": "string name=1; string value=2",
    "MetricSample": "repeated MetricLabel labels=1; uint64 value=2; repeated double bucket_bounds=3; double sum=4; "
                    "uint64 count=5; repeated uint64 bucket_counts=6",
    "MetricFamily": "string name=1; string help=2; MetricType type=3; string unit=4; repeated MetricSample series=5",
    "MetricsReply": "repeated MetricFamily families=1; string start_id=2; string boot_id=3; double start_time=4; "
                    "uint64 starts=5; uint64 unclean_starts=6; uint32 flush_interval=7; double counting_since=8",
    "StatusReply": "double uptime=1; string server_version=2; uint32 protocol_version=3; uint32 connections=4; "
                   "uint32 sessions=5; uint64 requests=6; uint64 pushes=7; StoreStatus store=8; "
                   "uint64 log_lines_dropped=9",
    "StoreStatus": "string kind=1; string path=2; uint64 bookmarks=3; string error=4",
    "ListSessionsRequest": "uint32 page_size=1; string page_token=2",
    "ListSessionsReply": "repeated SessionInfo sessions=1; string next_page_token=2",
    "GetSessionRequest": "uint64 session_id=1",
    "SessionInfo": "uint64 session_id=1; string content_id=2; string stream_id=3; string profile=4; "
                   "SessionKind kind=5; string policy_preset=6; string client_name=7; uint32 peer_uid=8; "
                   "int32 peer_pid=9; double opened_at=10; uint64 pushes=11; uint32 break_count=12; "
                   "SessionStateReply state=13; optional double content_duration=14",
    "WatchDecisionsRequest": "uint64 session_id=1; string content_id=2",
    "Decision": "uint64 seq=1; uint64 session_id=2; string content_id=3; string stream_id=4; string profile=5; "
                "double at=6; DecisionKind kind=7; string reason=8; double stream_time=9; SeekReason seek_reason=10; "
                "string break_id=11; double content_time=12; BookmarkTrigger bookmark_trigger=13; "
                "BreakSkipReason skip_reason=14",
    # policy.proto
    "PolicyOverrides": "SkippedBreakChoice skipped_break_choice=1; SeekGate seek_gate=2; "
                       "optional bool enforce_backward_seeks=3; ReturnToTarget return_to_target=4; "
                       "LandingInBreak landing_in_unwatched_break=5; optional bool skip_watched_break_on_landing=6; "
                       "WatchedWhen watched_when=7; optional bool refuse_seeks_during_unwatched_break=8; "
                       "WatchedBreakOnPlayback watched_break_on_playback=9; "
                       "optional double snapback_landing_offset=10; optional double cooldown=11; "
                       "optional bool trick_play_as_seek=12; ResumeBreaks resume_breaks=13; "
                       "optional bool preroll_disabled=14; optional bool midrolls_disabled=15; "
                       "optional bool live_snapback=16; optional bool live_bookmarks=17; "
                       "optional uint32 max_snapbacks_per_break=18; optional double coverage_tolerance=19; "
                       "optional double bookmark_interval=20; optional double finished_margin=21; "
                       "TrickPlaySkippedBreaks trick_play_skipped_breaks=22",
    # timeline.proto
    "AdBreak": "string id=1; double start=2; double duration=3; repeated double ad_durations=4; bool watched=5; "
               "optional double content_resume_offset=6",
    "AdRules": "bool preroll=1; repeated double midroll_times=2; double midroll_every=3; bool postroll=4; "
               "optional double break_duration=5",
    "ResumeOptions": "bool use_bookmark=1; optional double resume_content_time=2; "
                     "optional double resume_stream_time=3",
    "OpenSessionRequest": "string stream_id=1; string content_id=2; string profile=3; SessionKind kind=4; "
                          "repeated AdBreak breaks=5; optional double content_duration=6; string policy_preset=7; "
                          "PolicyOverrides policy_overrides=8; ResumeOptions resume=9; AdRules ad_rules=10",
    "OpenSessionReply": "uint64 session_id=1; optional double start_stream_time=2; "
                        "repeated string breaks_before_resume=3; string policy_preset=4; "
                        "optional double resume_content_time=5; bool resumed_from_bookmark=6; uint64 last_push_seq=7",
    "ReportPlayheadRequest": "uint64 session_id=1; double stream_time=2; double rate=3; bool playing=4",
    "SeekStartedRequest": "uint64 session_id=1; double from_stream_time=2",
    "SeekEndedRequest": "uint64 session_id=1; double from_stream_time=2; double to_stream_time=3",
    "AdBreakStartedRequest": "uint64 session_id=1; string break_id=2; optional double stream_time=3",
    "AdBreakEndedRequest": "uint64 session_id=1; string break_id=2; optional double stream_time=3",
    "AdStartedRequest": "uint64 session_id=1; string break_id=2; uint32 index=3; optional double stream_time=4",
    "AdEndedRequest": "uint64 session_id=1; string break_id=2; uint32 index=3; optional double stream_time=4",
    "TrickPlayStartedRequest": "uint64 session_id=1; double stream_time=2; double rate=3",
    "TrickPlayEndedRequest": "uint64 session_id=1; double stream_time=2",
    "ContentCompleteRequest": "uint64 session_id=1",
    "UpdateBreaksRequest": "uint64 session_id=1; repeated AdBreak breaks=2",
    "PauseRequest": "uint64 session_id=1; double stream_time=2",
    "CloseSessionRequest": "uint64 session_id=1",
    "EventReply": "uint64 last_push_seq=1",
    "ContentTimeForStreamTimeRequest": "uint64 session_id=1; double stream_time=2",
    "ContentTimeReply": "double content_time=1",
    "StreamTimeForContentTimeRequest": "uint64 session_id=1; double content_time=2",
    "StreamTimeReply": "double stream_time=1",
    "BreakAtRequest": "uint64 session_id=1; double stream_time=2",
    "BreakAtReply": "AdBreak previous=1; AdBreak next=2",
    "GetSessionStateRequest": "uint64 session_id=1; uint32 first_break=2; uint32 max_breaks=3",
    "SessionStateReply": "SessionPhase phase=1; string current_break_id=2; double stream_time=3; "
                         "double content_time=4; bool playing=5; double rate=6; optional double pending_return=7; "
                         "repeated AdBreak breaks=8; optional double cooldown_until=9; "
                         "optional double last_bookmark_content_time=10; repeated BreakState break_states=11; "
                         "uint32 total_breaks=12",
    "BreakState": "string break_id=1; BreakPosition position=2; bool watched=3; bool exempt=4; "
                  "BreakSkipReason skip_reason=5",
    # push.proto
    "Push": "uint64 session_id=1; uint64 seq=2; string reason=3; oneof:kind SeekCommand seek=4; "
            "oneof:kind BreakWatched break_watched=5; oneof:kind BookmarkSaved bookmark_saved=6; "
            "oneof:kind BookmarkCleared bookmark_cleared=7; oneof:kind PlayBreak play_break=8; "
            "oneof:kind AllAdsCompleted all_ads_completed=9; oneof:kind SessionError session_error=10; "
            "oneof:kind BreakSkipped break_skipped=11",
    "BreakSkipped": "string break_id=1; BreakSkipReason reason=2",
    "SeekCommand": "double stream_time=1; SeekReason reason=2",
    "BreakWatched": "string break_id=1",
    "BookmarkSaved": "double content_time=1; double stream_time=2; BookmarkTrigger trigger=3",
    "BookmarkCleared": "",
    "PlayBreak": "string break_id=1",
    "AllAdsCompleted": "",
    "SessionError": "uint32 code=1; string message=2",
    # bookmarks.proto
    "Bookmark": "string content_id=1; string profile=2; double content_time=3; double stream_time=4; "
                "string stream_id=5; double updated_at=6; bool finished=7",
    "GetBookmarkRequest": "string profile=1; string content_id=2",
    "ListBookmarksRequest": "string profile=1; uint32 page_size=2; string page_token=3",
    "ListBookmarksReply": "repeated Bookmark bookmarks=1; string next_page_token=2",
    "DeleteBookmarkRequest": "string profile=1; string content_id=2",
    "DeleteBookmarkReply": "bool deleted=1",
    "ClearBookmarksRequest": "string profile=1",
    "ClearBookmarksReply": "uint32 deleted=1",
    # sync.proto
    "WatchChangesRequest": "uint64 after=1",
    "WatchChangesReply": "string device_id=1; string store_id=2; uint64 last_seq=3",
    "SyncStamp": "uint64 physical=1; uint64 counter=2; string device=3",
    "SyncBookmark": "double content_time=1; string stream_id=2; double stream_time=3; bool finished=4; "
                    "double updated_at=5",
    "SyncTombstone": "TombstoneKind kind=1",
    "SyncRecord": "string profile=1; string content_id=2; SyncStamp stamp=3; "
                  "oneof:value SyncBookmark bookmark=4; oneof:value SyncTombstone tombstone=5",
    "SyncWatchedBreak": "string content_id=1; string break_id=2; double watched_at=3",
    "SyncChange": "uint64 seq=1; oneof:change SyncRecord record=2; oneof:change SyncWatchedBreak watched=3",
    "MergeRequest": "repeated SyncRecord records=1; repeated SyncWatchedBreak watched=2",
    "MergeReply": "repeated bool records_changed=1; repeated bool watched_changed=2",
}

Field = collections.namedtuple("Field", "num name type mode")  # mode: "", "repeated", "optional", "oneof:<g>"


def _parse_schema(text):
    fields = []
    for decl in filter(None, (d.strip() for d in text.split(";"))):
        words = decl.split()
        mode = words.pop(0) if len(words) == 3 else ""
        name, num = words[1].split("=")
        fields.append(Field(int(num), name, words[0], mode))
    return {f.num: f for f in fields}


SCHEMA = {name: _parse_schema(text) for name, text in _MESSAGES.items()}

_DEFAULTS = {"uint32": 0, "int32": 0, "uint64": 0, "bool": False, "double": 0.0, "string": "", "bytes": b""}
_WIRE = {"uint32": VARINT, "int32": VARINT, "uint64": VARINT, "bool": VARINT, "double": I64, "string": LEN, "bytes": LEN}


def _wire_type(ftype):
    return VARINT if ftype in ENUMS else _WIRE.get(ftype, LEN)


def _has_presence(f):
    return f.mode.startswith(("optional", "oneof")) or f.type in SCHEMA


def _enc_scalar(ftype, v):
    if ftype in ENUMS or ftype in ("uint32", "uint64", "bool"):
        return enc_varint(int(v))
    if ftype == "int32":
        return enc_varint(int(v) & 0xFFFFFFFFFFFFFFFF)  # negatives take ten bytes, as in protobuf
    if ftype == "double":
        return struct.pack("<d", float(v))
    if ftype == "string":
        return v.encode("utf-8")
    if ftype == "bytes":
        return bytes(v)
    return encode(ftype, v)  # a message


def _len_prefixed(num, payload):
    return enc_varint(num << 3 | LEN) + enc_varint(len(payload)) + payload


def encode(msg_type, msg=None, **fields):
    """Encodes a dict (or keyword arguments) as the message msg_type. Unknown keys raise KeyError."""
    values = dict(msg or {}, **fields)
    by_name = {f.name: f for f in SCHEMA[msg_type].values()}
    unknown = set(values) - set(by_name)
    if unknown:
        raise KeyError("%s has no field %s" % (msg_type, ", ".join(sorted(unknown))))
    out = bytearray()
    for f in sorted(by_name.values(), key=lambda f: f.num):
        v = values.get(f.name)
        if v is None:
            continue
        wt = _wire_type(f.type)
        if f.mode == "repeated":
            if wt == LEN:  # strings, bytes, messages: one field each
                for item in v:
                    out += _len_prefixed(f.num, _enc_scalar(f.type, item))
            elif v:  # proto3 packs repeated numbers
                out += _len_prefixed(f.num, b"".join(_enc_scalar(f.type, item) for item in v))
            continue
        body = _enc_scalar(f.type, v)
        if not _has_presence(f) and body == {VARINT: b"\x00", I64: bytes(8), LEN: b""}[wt]:
            continue  # proto3: a field at its default (0, 0.0, false, "") is not on the wire; -0.0 is
        out += _len_prefixed(f.num, body) if wt == LEN else enc_varint(f.num << 3 | wt) + body
    return bytes(out)


def _dec_scalar(f, wt, raw):
    t = f.type
    want = _wire_type(t)
    if wt != want:
        raise DecodeError("field %s: wire type %d, expected %d" % (f.name, wt, want))
    if t in ENUMS:
        v = raw & 0xFFFFFFFF
        v = v - (1 << 32) if v >= 1 << 31 else v  # enums are int32
        return v if 0 <= v < len(ENUMS[t]) else 0  # unknown values read as UNSPECIFIED
    if t == "uint32":
        return raw & 0xFFFFFFFF
    if t == "int32":
        v = raw & 0xFFFFFFFF
        return v - (1 << 32) if v >= 1 << 31 else v
    if t == "uint64":
        return raw
    if t == "bool":
        return raw != 0
    if t == "double":
        return struct.unpack("<d", raw)[0]
    if t == "string":
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DecodeError("field %s: invalid UTF-8" % f.name) from e
    if t == "bytes":
        return raw
    return decode(t, raw)


def _unpack(f, raw):
    """A packed repeated number field's payload, as a list."""
    items, pos = [], 0
    while pos < len(raw):
        if f.type == "double":
            val, pos = _take(raw, pos, 8)
            items.append(_dec_scalar(f, I64, val))
        else:
            val, pos = dec_varint(raw, pos)
            items.append(_dec_scalar(f, VARINT, val))
    return items


def decode(msg_type, buf):
    """Decodes bytes as msg_type into a Msg holding every known field; unknown fields are skipped."""
    schema = SCHEMA[msg_type]
    msg = Msg()
    for f in schema.values():
        if f.mode == "repeated":
            msg[f.name] = []
        elif _has_presence(f):
            msg[f.name] = None
            if f.mode.startswith("oneof:"):
                msg[f.mode[6:]] = None
        else:
            msg[f.name] = 0 if f.type in ENUMS else _DEFAULTS[f.type]
    pos = 0
    while pos < len(buf):
        num, wt, raw, pos = read_field(buf, pos)
        if wt == EGROUP:
            raise DecodeError("end-group %d outside a group" % num)
        f = schema.get(num)
        if f is None:
            continue  # unknown field: skipped, whatever its wire type
        if f.mode == "repeated":
            if wt == LEN and _wire_type(f.type) != LEN:
                msg[f.name].extend(_unpack(f, raw))
            else:
                msg[f.name].append(_dec_scalar(f, wt, raw))
            continue
        msg[f.name] = _dec_scalar(f, wt, raw)  # last one wins (sub-messages are not merged)
        if f.mode.startswith("oneof:"):
            group = f.mode[6:]
            for other in schema.values():  # setting one member clears the others
                if other.mode == f.mode and other is not f:
                    msg[other.name] = None
            msg[group] = f.name
    return msg


def enum_name(enum_type, value):
    names = ENUMS[enum_type]
    return names[value] if 0 <= value < len(names) else str(value)


# --------------------------------------------------------------------------------------------------
# Frames, methods, status codes
# --------------------------------------------------------------------------------------------------

HEADER = struct.Struct(">IIBBH")  # length, call id, type, status, method
REQUEST, RESPONSE, PUSH = 1, 2, 3
PROTOCOL_VERSION = 1

STATUS_NAMES = ("OK CANCELLED UNKNOWN INVALID_ARGUMENT DEADLINE_EXCEEDED NOT_FOUND ALREADY_EXISTS "
                "PERMISSION_DENIED RESOURCE_EXHAUSTED FAILED_PRECONDITION ABORTED OUT_OF_RANGE UNIMPLEMENTED "
                "INTERNAL UNAVAILABLE DATA_LOSS UNAUTHENTICATED").split()
globals().update({name: code for code, name in enumerate(STATUS_NAMES)})

_SERVICES = [  # (service, [(rpc, request, reply)]), in declaration order: id = service << 8 | index
    # WatchDecisions answers an empty RESPONSE (reply None), then Decision PUSH frames on its call id;
    # WatchChanges a WatchChangesReply, then SyncChange PUSH frames on its call id.
    ("Control", [("Hello", "HelloRequest", "HelloReply"), ("GetStatus", "StatusRequest", "StatusReply"),
                 ("ListSessions", "ListSessionsRequest", "ListSessionsReply"),
                 ("GetSession", "GetSessionRequest", "SessionInfo"),
                 ("WatchDecisions", "WatchDecisionsRequest", None),
                 ("GetMetrics", "MetricsRequest", "MetricsReply")]),
    ("Timeline", [("OpenSession", "OpenSessionRequest", "OpenSessionReply")]
     + [(ev, ev + "Request", "EventReply") for ev in (
         "ReportPlayhead SeekStarted SeekEnded AdBreakStarted AdBreakEnded AdStarted AdEnded TrickPlayStarted "
         "TrickPlayEnded ContentComplete UpdateBreaks Pause CloseSession").split()]
     + [("ContentTimeForStreamTime", "ContentTimeForStreamTimeRequest", "ContentTimeReply"),
        ("StreamTimeForContentTime", "StreamTimeForContentTimeRequest", "StreamTimeReply"),
        ("BreakAt", "BreakAtRequest", "BreakAtReply"),
        ("GetSessionState", "GetSessionStateRequest", "SessionStateReply")]),
    ("Bookmarks", [("Get", "GetBookmarkRequest", "Bookmark"), ("List", "ListBookmarksRequest", "ListBookmarksReply"),
                   ("Delete", "DeleteBookmarkRequest", "DeleteBookmarkReply"),
                   ("Clear", "ClearBookmarksRequest", "ClearBookmarksReply")]),
    ("Sync", [("WatchChanges", "WatchChangesRequest", "WatchChangesReply"), ("Merge", "MergeRequest", "MergeReply")]),
]
Method = collections.namedtuple("Method", "name id request reply")
METHODS = {"%s/%s" % (svc, rpc): Method("%s/%s" % (svc, rpc), sid << 8 | i, req, rep)
           for sid, (svc, rpcs) in enumerate(_SERVICES) for i, (rpc, req, rep) in enumerate(rpcs)}
METHODS_BY_ID = {m.id: m for m in METHODS.values()}
OPEN_SESSION = METHODS["Timeline/OpenSession"].id
WATCH_DECISIONS = METHODS["Control/WatchDecisions"].id
WATCH_CHANGES = METHODS["Sync/WatchChanges"].id

Frame = collections.namedtuple("Frame", "call_id type status method body")
PushEvent = collections.namedtuple("PushEvent", "call_id method push")  # the frame's header and its Push


def encode_frame(call_id, ftype, method, body=b"", status=0):
    return HEADER.pack(len(body), call_id, ftype, status, method) + body


class ProtocolError(Exception):
    """The server broke the framing rules, or closed the connection."""


class RpcError(Exception):
    """A RESPONSE with a non-OK status; its body was a snapback.v1.Status."""

    def __init__(self, code, message, method=None, call_id=None, body_code=None):
        self.code, self.message, self.method, self.call_id = code, message, method, call_id
        self.body_code = body_code  # Status.code from the body (should equal the header's code)
        name = STATUS_NAMES[code] if code < len(STATUS_NAMES) else str(code)
        super().__init__("%s (%d): %s" % (name, code, message))

    @property
    def name(self):
        return STATUS_NAMES[self.code] if self.code < len(STATUS_NAMES) else str(self.code)


# --------------------------------------------------------------------------------------------------
# The client
# --------------------------------------------------------------------------------------------------

class Client:
    """One connection. Not thread-safe: reading happens inside call()/wait()/next_push().

    Responses are matched by call id; pushes read on the way are queued in arrival order (take_pushes,
    next_push), so the pushes returned right after call() are exactly those that arrived before its reply.
    """

    MAX_INBOUND = 64 << 20  # guard against a corrupt header; at least HelloReply.max_frame_size is accepted

    def __init__(self, path, timeout=10.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.timeout = timeout
        self.hello_reply = None
        self._buf = bytearray()
        self._next_call_id = 1
        self._pending = set()  # call ids sent and not yet answered
        self._responses = {}  # call id -> Frame, answered but not yet collected
        self._pushes = collections.deque()  # PushEvents not yet taken
        self.session_call_ids = {}  # open session id -> its OpenSession call id (not reused while open)

    # -- plumbing --

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _new_call_id(self):
        while True:
            cid = self._next_call_id
            self._next_call_id = cid % 0xFFFFFFFF + 1  # 1 .. 2^32-1, never 0
            if cid not in self._pending and cid not in self._responses and cid not in self.session_call_ids.values():
                return cid

    def _fill(self, n, timeout):
        """Buffers at least n bytes (a timeout keeps what was read, so a later read resumes cleanly)."""
        self.sock.settimeout(timeout)
        while len(self._buf) < n:
            chunk = self.sock.recv(max(65536, n - len(self._buf)))
            if not chunk:
                raise ProtocolError("connection closed by the server")
            self._buf += chunk

    def read_frame(self, timeout=None):
        """Reads one frame and files it: a RESPONSE by call id, a PUSH in the push queue. Returns it."""
        timeout = self.timeout if timeout is None else timeout
        self._fill(HEADER.size, timeout)
        length, call_id, ftype, status, method = HEADER.unpack_from(self._buf)
        if length > max(self.MAX_INBOUND, (self.hello_reply or {}).get("max_frame_size", 0)):
            raise ProtocolError("frame of %d bytes" % length)
        self._fill(HEADER.size + length, timeout)
        body = bytes(self._buf[HEADER.size:HEADER.size + length])
        del self._buf[:HEADER.size + length]
        frame = Frame(call_id, ftype, status, method, body)
        if ftype == RESPONSE:
            if call_id == 0 and status != OK:
                # The server refused the connection (allow-list, connection limits) and closes it.
                st = decode("Status", body)
                raise RpcError(status, st.message, None, 0, st.code)
            if call_id not in self._pending:
                raise ProtocolError("response to call %d, which is not in flight" % call_id)
            self._pending.discard(call_id)
            self._responses[call_id] = frame
        elif ftype == PUSH:
            if status != 0:
                raise ProtocolError("push with status %d" % status)
            # A push carries a Push, a Decision on a WatchDecisions stream or a SyncChange on a WatchChanges
            # stream (PushEvent.push holds any of them).
            kind = {WATCH_DECISIONS: "Decision", WATCH_CHANGES: "SyncChange"}.get(method, "Push")
            self._pushes.append(PushEvent(call_id, method, decode(kind, body)))
        else:
            raise ProtocolError("frame type %d from the server" % ftype)
        return frame

    # -- calls --

    def send_raw(self, method_id, body=b"", call_id=None):
        """Sends a REQUEST with a ready-made body; returns its call id."""
        cid = self._new_call_id() if call_id is None else call_id
        try:
            self.sock.sendall(encode_frame(cid, REQUEST, method_id, body))
        except (BrokenPipeError, ConnectionResetError):
            # A server that refused the connection answered first (call id 0) and hung up: read why.
            self.read_frame()  # raises RpcError for that answer
            raise
        self._pending.add(cid)
        return cid

    def send(self, method, msg=None, **fields):
        """Sends a request without waiting (pipelining); returns its call id. method: "Service/Rpc"."""
        m = METHODS[method]
        return self.send_raw(m.id, encode(m.request, msg, **fields))

    def wait(self, call_id, timeout=None):
        """Reads frames until the response to call_id; returns that Frame."""
        while call_id not in self._responses:
            self.read_frame(timeout)
        return self._responses.pop(call_id)

    def call_raw(self, method_id, body=b"", timeout=None):
        """Sends a raw request and waits: (status, body). The body is a Status when status != OK."""
        frame = self.wait(self.send_raw(method_id, body), timeout)
        return frame.status, frame.body

    def result(self, call_id, timeout=None):
        """Waits for call_id and decodes its reply, or raises RpcError with the decoded Status."""
        frame = self.wait(call_id, timeout)
        m = METHODS_BY_ID.get(frame.method)
        if frame.status != OK:
            st = decode("Status", frame.body)
            raise RpcError(frame.status, st.message, m.name if m else frame.method, call_id, st.code)
        if m is None:
            raise ProtocolError("OK response for unknown method 0x%04x" % frame.method)
        if m.reply is None:
            return None
        reply = decode(m.reply, frame.body)
        if frame.method == OPEN_SESSION:
            self.session_call_ids[reply.session_id] = call_id  # close_session() forgets it
        return reply

    def call(self, method, msg=None, **fields):
        """One unary call: the decoded reply, or RpcError."""
        return self.result(self.send(method, msg, **fields))

    # -- pushes --

    def take_pushes(self):
        """Every push received so far and not yet taken, in arrival order (reads nothing new)."""
        out = list(self._pushes)
        self._pushes.clear()
        return out

    def next_push(self, timeout=None):
        """The next push, reading the socket for up to timeout seconds; None on timeout."""
        try:
            while not self._pushes:
                self.read_frame(timeout)
        except socket.timeout:
            return None
        return self._pushes.popleft()

    # -- conveniences --

    def hello(self, client_name="snapback-python"):
        self.hello_reply = self.call("Control/Hello", protocol_version=PROTOCOL_VERSION, client_name=client_name)
        return self.hello_reply

    def open_session(self, msg=None, **fields):
        return self.call("Timeline/OpenSession", msg, **fields)

    def close_session(self, session_id):
        reply = self.call("Timeline/CloseSession", session_id=session_id)
        self.session_call_ids.pop(session_id, None)
        return reply
