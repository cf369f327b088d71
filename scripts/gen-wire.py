#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Generates the typed Swift mapping of proto/snapback/v1 onto protobuf-c's structs.

    scripts/gen-wire.py DESCRIPTOR_SET SOURCES_DIR JSON_DIR TESTS_DIR

DESCRIPTOR_SET is `protoc-c --descriptor_set_out --include_imports --include_source_info` over the
.proto files. For each file X.proto it writes SOURCES_DIR/X.pb.swift: per message, a public Swift value
type in the namespace `SnapbackV1`, a `WireMessage` when it is a body (fields in lowerCamelCase; a proto3 optional, which
these files spell as a one-field oneof `_name`, as an Optional; a repeated field as an array; a oneof as
an enum; an enum as the C enum protoc-c generated) and its mapping to and from the protobuf-c struct by
typed member access (`c.session_id`), so that a field the .proto does not have, or of another type, does
not compile. Messages of plain scalars are also read and written straight from and to their bytes
(`gen_direct`), and requests with a list of sub-messages, with those sub-messages, read straight from
them (`gen_clean_reader`). It writes SOURCES_DIR/WireMethod.swift, the services and their methods by id
(`WireService`, `WireMethod`), and, beside `PolicyOverrides`, the rows that map its fields onto
`AdPolicy.fields` (`protoRows`). It writes JSON_DIR/X.json.swift: per message, its proto3 canonical JSON
encoder and bounded decoder (`ProtoJSONMessage`, in the module SnapbackJSON, which the daemon does not
link), and per enum its values' names. It writes TESTS_DIR/Samples.swift: per message, a value with every
field set, for the round-trip tests.

Needs google.protobuf (Debian: python3-protobuf) for /usr/bin/python3. scripts/gen-proto.sh runs it
(`make proto`; `make check-proto` fails when the committed output is stale).
"""

import os
import sys

from google.protobuf import descriptor_pb2

FD = descriptor_pb2.FieldDescriptorProto

SCALARS = {
    FD.TYPE_DOUBLE: ("Double", "0"),
    FD.TYPE_FLOAT: ("Float", "0"),
    FD.TYPE_UINT64: ("UInt64", "0"),
    FD.TYPE_UINT32: ("UInt32", "0"),
    FD.TYPE_INT64: ("Int64", "0"),
    FD.TYPE_INT32: ("Int32", "0"),
}

# The wire type of each singular field kind a clean reader takes.
CLEAN_WIRE_TYPES = {
    FD.TYPE_DOUBLE: 1, FD.TYPE_FLOAT: 5, FD.TYPE_UINT64: 0, FD.TYPE_UINT32: 0, FD.TYPE_INT64: 0,
    FD.TYPE_INT32: 0, FD.TYPE_BOOL: 0, FD.TYPE_ENUM: 0, FD.TYPE_STRING: 2, FD.TYPE_MESSAGE: 2,
}

# Messages whose Swift type is the timeline's own rather than a value of their own: the module's type has a
# property of each field's name and type, and an `init()` (SnapbackWire gives it one). An OpenSession's
# breaks are then read straight into the array the session keeps; a type of their own cost a second array
# of a thousand breaks, mapped element by element and freed (~500 instructions per break, check-budget).
DOMAIN_TYPES = {"AdBreak": "SnapbackTimeline.AdBreak", "Bookmark": "SnapbackTimeline.Bookmark"}

SWIFT_KEYWORDS = {"as", "break", "case", "class", "continue", "default", "defer", "do", "else", "enum",
                  "extension", "fallthrough", "false", "for", "func", "guard", "if", "import", "in", "init",
                  "internal", "is", "let", "nil", "operator", "private", "protocol", "public", "repeat",
                  "return", "self", "static", "struct", "subscript", "super", "switch", "throw", "throws",
                  "true", "try", "var", "where", "while", "Type"}


# The licence line every generated file starts with, as the hand-written sources do.
SPDX = "// SPDX-License-Identifier: Apache-2.0"

def camel_to_lower(name):
    """protoc-c's CamelToLower: `GetSessionStateRequest` → `get_session_state_request`."""
    out, was_upper = "", True
    for ch in name:
        if ch.isupper():
            if not was_upper:
                out += "_"
            out += ch.lower()
            was_upper = True
        else:
            out += ch
            was_upper = False
    return out


def camel_to_upper(name):
    return camel_to_lower(name).upper()


def lower_camel(snake):
    words = [w for w in snake.split("_") if w]
    name = words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])
    return f"`{name}`" if name in SWIFT_KEYWORDS else name


def upper_camel(snake):
    return "".join(w[:1].upper() + w[1:] for w in snake.split("_") if w)


CARRIED_FILES = {"snapback/v1/telemetry.proto"}


class Model:
    def __init__(self, fds):
        self.files = [f for f in fds.file if f.package == "snapback.v1"]
        self.messages = {}
        self.enums = {}
        for f in self.files:
            for m in f.message_type:
                if m.nested_type or m.enum_type:
                    sys.exit(f"gen-wire: {m.name}: nested types are not supported")
                self.messages[f".{f.package}.{m.name}"] = m
            for e in f.enum_type:
                self.enums[f".{f.package}.{e.name}"] = e
        self.plan_clean_readers()
        self.plan_direct_writers()
        rpcs = {t for f in self.files for service in f.service for method in service.method
                for t in (method.input_type, method.output_type)}
        # The files of messages carried whole outside the socket (the telemetry report, published to a
        # stream): those no other message holds are bodies too.
        fields = {fd.type_name for m in self.messages.values() for fd in m.field}
        carried = {f".{f.package}.{m.name}" for f in self.files if f.name in CARRIED_FILES for m in f.message_type}
        self.bodies = {key.rsplit(".", 1)[1] for key in self.messages
                       if key in rpcs or key.endswith("Reply") or (key in carried and key not in fields)}

    def plan_clean_readers(self):
        """The messages read straight from their bytes by a generated clean reader (`gen_clean_reader`): the
        requests (an rpc's input, what the daemon reads from a peer) with a repeated sub-message field (a list
        a peer may send by the thousand: an OpenSession's breaks), and the sub-messages they hold, when every
        field of each is of a kind the reader takes. Replies are read by clients only, off the loop."""
        inputs = {method.input_type for f in self.files for service in f.service for method in service.method}
        self.clean_readers = set()
        for key, m in self.messages.items():
            if key in inputs and any(f.label == FD.LABEL_REPEATED and f.type == FD.TYPE_MESSAGE for f in m.field):
                reach = self.clean_closure(m, set())
                if reach is not None:
                    self.clean_readers |= reach

    def plan_direct_writers(self):
        """The messages written straight to their bytes by a generated writer (`gen_direct_writer`): the
        replies (an rpc's output, what the daemon writes to a peer) with a repeated sub-message field (a list
        a peer may ask for by the thousand: a GetSessionState page of 1,000 breaks), and the sub-messages
        they hold, when no real oneof is among them."""
        outputs = {method.output_type for f in self.files for service in f.service for method in service.method}
        self.direct_writers = set()
        for key, m in self.messages.items():
            if key in outputs and any(f.label == FD.LABEL_REPEATED and f.type == FD.TYPE_MESSAGE for f in m.field):
                reach = self.direct_closure(m, set())
                if reach is not None:
                    self.direct_writers |= reach

    def direct_closure(self, m, seen):
        """`m` and the messages under it when all can be written by a direct writer; None otherwise."""
        return self.closure(m, seen, max_number=None)

    def clean_closure(self, m, seen):
        """`m` and the messages under it when all can be read by a clean reader (whose bit of fields seen
        holds numbers up to 63); None otherwise."""
        return self.closure(m, seen, max_number=63)

    def closure(self, m, seen, max_number):
        """`m` and the messages under it when every field of each is of a kind the straight readers and
        writers take (no real oneof; lists of messages or of doubles or floats; field numbers up to
        `max_number` when given); None otherwise."""
        if m.name in seen:
            return seen
        seen.add(m.name)
        if max_number is not None and m.field and max(f.number for f in m.field) > max_number:
            return None
        for f in m.field:
            if f.HasField("oneof_index") and m.oneof_decl[f.oneof_index].name != "_" + f.name:
                return None  # a real oneof
            if f.type == FD.TYPE_MESSAGE:
                if self.closure(self.messages[f.type_name], seen, max_number) is None:
                    return None
            elif f.label == FD.LABEL_REPEATED:
                if f.type not in (FD.TYPE_DOUBLE, FD.TYPE_FLOAT):
                    return None
            elif f.type not in CLEAN_WIRE_TYPES:
                return None
        return seen

    @staticmethod
    def c_struct(name):
        return "Snapback__V1__" + name

    @staticmethod
    def c_prefix(name):
        return "snapback__v1__" + camel_to_lower(name)

    @staticmethod
    def short(type_name):
        return type_name.rsplit(".", 1)[1]


class Field:
    """A field with how it is spelt in Swift and in C."""

    def __init__(self, model, message, f):
        self.f = f
        self.proto = f.name
        self.c = f.name
        self.swift = lower_camel(f.name)
        self.repeated = f.label == FD.LABEL_REPEATED
        self.optional = False  # a proto3 optional: a one-field oneof `_name`
        self.oneof = None  # the name of a real oneof it belongs to
        if f.HasField("oneof_index"):
            oneof = message.oneof_decl[f.oneof_index]
            members = [x for x in message.field if x.HasField("oneof_index") and x.oneof_index == f.oneof_index]
            if oneof.name == "_" + f.name and len(members) == 1:
                self.optional = True
                self.case_c = f"_{f.name}_case"
                self.case_const = (f"{camel_to_upper(message.name).upper()}__{oneof.name.upper()}_"
                                   f"{f.name.upper()}")
            else:
                self.oneof = oneof.name
                self.case_const = f"{camel_to_upper(message.name).upper()}__{oneof.name.upper()}_{f.name.upper()}"
            self.case_const = "SNAPBACK__V1__" + self.case_const
        t = f.type
        if t in SCALARS:
            self.kind, (self.element, self.zero) = "scalar", SCALARS[t]
        elif t == FD.TYPE_BOOL:
            self.kind, self.element, self.zero = "bool", "Bool", "false"
        elif t == FD.TYPE_STRING:
            self.kind, self.element, self.zero = "string", "String", '""'
        elif t == FD.TYPE_ENUM:
            self.kind = "enum"
            self.element = Model.c_struct(Model.short(f.type_name))
            self.zero = f"{self.element}(rawValue: 0)"
            self.enum = model.enums[f.type_name]
        elif t == FD.TYPE_MESSAGE:
            self.kind = "message"
            self.element = "SnapbackV1." + Model.short(f.type_name)
            self.c_element = Model.c_struct(Model.short(f.type_name))
            self.zero = None
        else:
            sys.exit(f"gen-wire: {message.name}.{f.name}: type {t} is not supported")

    @property
    def swift_type(self):
        if self.repeated:
            return f"[{self.element}]"
        if self.optional or self.kind == "message":
            return f"{self.element}?"
        return self.element

    @property
    def default(self):
        if self.repeated:
            return "[]"
        if self.optional or self.kind == "message":
            return "nil"
        return self.zero


def comment_of(locations, path):
    loc = locations.get(tuple(path))
    if not loc or not loc.leading_comments.strip():
        return []
    return [line.strip() for line in loc.leading_comments.strip().splitlines()]


def doc(lines, indent):
    return [f"{indent}/// {line}".rstrip() for line in lines]


def gen_message(model, m, comments, field_comments):
    """The value type, then its mapping to protobuf-c."""
    name = m.name
    c = model.c_struct(name)
    prefix = model.c_prefix(name)
    fields = [Field(model, m, f) for f in m.field]
    plain = [f for f in fields if not f.oneof]
    oneofs = {}
    for f in fields:
        if f.oneof:
            oneofs.setdefault(f.oneof, []).append(f)

    out = []
    out.append("extension SnapbackV1 {")
    out += doc(comments or [f"`snapback.v1.{name}`."], "    ")
    if comments:
        out.append("    ///")
        out.append(f"    /// `snapback.v1.{name}`.")
    if name in DOMAIN_TYPES:
        out.append(f"    public typealias {name} = {DOMAIN_TYPES[name]}")
        out.append("}")
        out.append("")
    else:
        out += gen_struct(name, plain, oneofs, field_comments)


    # Reading from protobuf-c's struct.
    out.append(f"extension SnapbackV1.{name}: ProtoCMessage {{")
    out.append(f"    typealias C = {c}")
    out.append(f'    static let protoName = "snapback.v1.{name}"')
    out.append("")
    out.append(f"    static func cInit(_ m: UnsafeMutablePointer<{c}>) {{ {prefix}__init(m) }}")
    out.append("")
    out.append(f"    static func cUnpack(_ count: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<{c}>? {{")
    out.append(f"        {prefix}__unpack(nil, count, data)")
    out.append("    }")
    out.append("")
    out.append(f"    static func cFree(_ m: UnsafeMutablePointer<{c}>) {{ {prefix}__free_unpacked(m, nil) }}")
    out.append("")
    bounded = [f for f in fields if f.repeated and f.kind == "message"]
    if bounded:
        items = ", ".join(f'({f.f.number}, "{f.proto}")' for f in bounded)
        out.append(f"    static let boundedFields: [(number: UInt64, name: String)] = [{items}]")
        out.append("")
    uses_path = any(f.kind in ("string", "message") for f in fields)
    uses_limit = any(f.kind == "message" for f in fields)
    path = "path _path" if uses_path else "path _"
    limit = "maxElements" if uses_limit else "maxElements _"
    # Every reader throws, those of messages without strings or sub-messages too: one signature, so that a
    # field of any message type is read with `try`.
    throws = "throws(WireError) "
    out.append(f"    init(_ p: UnsafePointer<{c}>, {path}: () -> String, {limit}: Int) {throws}{{")
    if name in DOMAIN_TYPES:
        out.append("        self.init()")
    if fields:
        out.append("        let c = p.pointee")
    for f in plain:
        out += ["        " + line for line in read_field(f)]
    for oneof, members in oneofs.items():
        out.append(f"        switch c.{oneof}_case {{")
        for f in members:
            out.append(f"        case {f.case_const}:")
            out.append(f"            if let q = c.{f.c} {{")
            out.append(f'                self.{lower_camel(oneof)} = .{f.swift}(try {f.element}(q, path: {{ _path() + "{f.proto}." }}, '
                       "maxElements: maxElements))")
            out.append("            }")
        out.append("        default: break")
        out.append("        }")
    out.append("    }")
    out.append("")

    # Writing protobuf-c's struct.
    arena = "arena" if any(f.kind in ("string", "message") or f.repeated for f in fields) else "_"
    m_name = "m" if fields else "_"
    out.append(f"    func write(to {m_name}: inout {c}, in {arena}: CArena) {{")
    for f in plain:
        out += ["        " + line for line in write_field(f)]
    for oneof, members in oneofs.items():
        out.append(f"        switch self.{lower_camel(oneof)} {{")
        for f in members:
            out.append(f"        case .{f.swift}(let v):")
            out.append(f"            m.{oneof}_case = {f.case_const}")
            out.append(f"            m.{f.c} = arena.message(v)")
        out.append("        case nil: break")
        out.append("        }")
    out.append("    }")
    out.append("}")
    # The messages a peer sends or gets back as a whole body (an rpc's request or answer, a `…Reply`) are
    # public `WireMessage`s; a sub-message is not, which keeps its body codec out of the daemon's binary.
    if name in model.bodies:
        out += ["", f"extension SnapbackV1.{name}: WireMessage {{", "    @discardableResult",
                "    public func encode(into out: inout [UInt8]) -> Int { protoEncode(into: &out) }", "",
                "    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> Self {",
                "        try decode(body, maxElements: .max)", "    }", "}"]
    if is_plain_scalar_message(fields):
        out += gen_direct(m, fields)
    elif m.name in model.clean_readers:
        out += gen_clean_reader(model, m, fields)
    if m.name in model.direct_writers:
        out += gen_direct_writer(m, fields)
    return out


def gen_struct(name, plain, oneofs, field_comments):
    """A message's public value type of its own (the lines inside `extension SnapbackV1`, and its closing):
    every field a `var` at its proto3 default, an empty `init()` and a memberwise one with every argument
    defaulted, in field order."""
    out = [f"    public struct {name}: Sendable, Equatable {{"]
    params = []
    for f in plain:
        out += doc(field_comments[f.f.number], "        ")
        out.append(f"        public var {f.swift}: {f.swift_type} = {f.default}")
        params.append((f.swift, f.swift_type, f.default))
    for oneof, members in oneofs.items():
        type_name = upper_camel(oneof)
        out.append(f"        public var {lower_camel(oneof)}: {type_name}? = nil")
        params.append((lower_camel(oneof), f"{type_name}?", "nil"))
        out.append("")
        out.append(f"        /// The oneof `{oneof}`.")
        out.append(f"        public enum {type_name}: Sendable, Equatable {{")
        for f in members:
            out += doc(field_comments[f.f.number], "            ")
            out.append(f"            case {f.swift}({f.element})")
        out.append("        }")
    out.append("")
    # Emitted into the code that calls them only: the daemon's binary keeps none it does not use.
    out.append("        @_alwaysEmitIntoClient")
    out.append("        public init() {}")
    if params:
        out.append("")
        args = ", ".join(f"{n}: {t} = {d}" for n, t, d in params)
        out.append("        @_alwaysEmitIntoClient")
        out.append(f"        public init({args}) {{")
        for n, _, _ in params:
            bare = n.strip("`")
            out.append(f"            self.{bare} = {bare}" if bare == n else f"            self.{n} = {n}")
        out.append("        }")
    out.append("    }")
    out.append("}")
    out.append("")
    return out


def is_plain_scalar_message(fields):
    """Whether the message is read and written straight from and to its bytes (`WireFastPath`): fields
    that are singular uint64, double or bool only, numbered 1 to 7 (the reader's one byte of seen fields)."""
    return all(f.kind in ("scalar", "bool") and f.element in ("UInt64", "Double", "Bool") and not f.repeated
               and not f.optional and not f.oneof and 1 <= f.f.number <= 7 for f in fields)


def gen_direct(m, fields):
    """The straight reader and writer of a message of plain scalars."""
    name = m.name
    out = ["", f"extension SnapbackV1.{name}: ProtoPlainMessage {{"]
    out.append("    /// The message read straight from `bytes` in their clean form (known fields of their own wire types,")
    out.append("    /// each at most once, nothing else); nil for any other form, which protobuf-c reads.")
    out.append("    @inline(__always)")
    out.append("    init?(clean bytes: UnsafeRawBufferPointer) {")
    out.append("        self.init()")
    out.append("        var r = WireFastPath.Reader(bytes)")
    out.append("        while !r.atEnd {")
    out.append("            guard let (number, wire) = r.fieldOnce() else { return nil }")
    out.append("            switch (number, wire) {")
    for f in fields:
        if f.element == "Double":
            out.append(f"            case ({f.f.number}, 1): guard let v = r.double() else {{ return nil }}; self.{f.swift} = v")
        elif f.element == "Bool":
            out.append(f"            case ({f.f.number}, 0): guard let v = r.varint() else {{ return nil }}; self.{f.swift} = v != 0")
        else:
            out.append(f"            case ({f.f.number}, 0): guard let v = r.varint() else {{ return nil }}; self.{f.swift} = v")
    out.append("            default: return nil")
    out.append("            }")
    out.append("        }")
    out.append("    }")
    out.append("")
    bound = sum(11 if f.element == "UInt64" else 9 if f.element == "Double" else 2 for f in fields)
    out.append("    /// At least the size of the message's bytes.")
    out.append(f"    static let byteBound = {bound}")
    out.append("")
    out.append("    /// The message's bytes, as protobuf-c packs them (fields in order, proto3 defaults left out),")
    out.append("    /// written straight at `out`'s end (at least `byteBound` bytes left).")
    out.append("    @inline(__always)")
    m_name = "out" if fields else "_"
    out.append(f"    func write(to {m_name}: inout RawWriter) {{")
    for f in fields:
        if f.element == "Double":
            out.append(f"        out.doubleField({f.f.number}, self.{f.swift})")
        elif f.element == "Bool":
            out.append(f"        out.uint64Field({f.f.number}, self.{f.swift} ? 1 : 0)")
        else:
            out.append(f"        out.uint64Field({f.f.number}, self.{f.swift})")
    out.append("    }")
    out.append("}")
    return out


def gen_clean_reader(model, m, fields):
    """The straight reader of a message with lists of sub-messages (or of such a sub-message): its bytes
    in their clean form are read without protobuf-c, whose unpacking allocates per element, per string and
    per array; any other form returns nil and goes to protobuf-c, which then reads and refuses as it does
    for any message (the same error, naming the same field). The fields are set by a mutating `readClean`
    that the failable init calls: the loop written in the init itself cost an OpenSession of 1,000 breaks
    ~220 instructions more per break (check-budget)."""
    name = m.name
    repeated = [f.f.number for f in fields if f.repeated and f.kind == "message"]
    out = ["", f"extension SnapbackV1.{name} {{"]
    out.append("    /// The message read straight from `bytes` in their clean form (`readClean`); nil for any other form,")
    out.append("    /// which protobuf-c reads.")
    out.append("    init?(clean bytes: UnsafeRawBufferPointer) {")
    out.append("        self.init()")
    out.append("        guard readClean(bytes) else { return nil }")
    out.append("    }")
    out.append("")
    out.append("    /// Sets the fields read from `bytes` in their clean form: known fields of their own wire types,")
    each = "each at most once but the repeated sub-messages" if repeated else "each at most once"
    out.append(f"    /// {each}, doubles packed, strings UTF-8 (read up to a NUL, as")
    out.append("    /// protobuf-c's C string is), sub-messages clean too; false for any other form.")
    out.append("    mutating func readClean(_ bytes: UnsafeRawBufferPointer) -> Bool {")
    out.append("        var r = WireFastPath.Reader(bytes)")
    out.append("        var seen: UInt64 = 0")
    out.append("        while !r.atEnd {")
    out.append("            guard let (number, wire) = r.field() else { return false }")
    if repeated:
        numbers = " && ".join(f"number != {n}" for n in repeated)
        out.append(f"            if {numbers} {{")
        out.append("                let bit: UInt64 = 1 << number")
        out.append("                guard seen & bit == 0 else { return false }")
        out.append("                seen |= bit")
        out.append("            }")
    else:
        out.append("            let bit: UInt64 = 1 << number")
        out.append("            guard seen & bit == 0 else { return false }")
        out.append("            seen |= bit")
    out.append("            switch (number, wire) {")
    for f in fields:
        n = f.f.number
        target = f"self.{f.swift}"
        if f.repeated and f.kind == "message":
            out.append(f"            case ({n}, 2):")
            out.append(f"                guard let b = r.lengthDelimited(), let v = {f.element}(clean: b) else {{ return false }}")
            out.append(f"                {target}.append(v)")
            continue
        if f.repeated:
            reader = {"Double": "r.packedDoubles()", "Float": "r.packedFloats()"}[f.element]
            out += [f"            case ({n}, 2):", f"                guard let v = {reader} else {{ return false }}",
                    f"                {target} = v"]
            continue
        wire = CLEAN_WIRE_TYPES[f.f.type]
        if f.kind == "message":
            out.append(f"            case ({n}, 2):")
            out.append(f"                guard let b = r.lengthDelimited(), let v = {f.element}(clean: b) else {{ return false }}")
            out.append(f"                {target} = v")
            continue
        if f.kind == "string":
            value = "r.string()"
        elif f.element == "Double":
            value = "r.double()"
        elif f.element == "Float":
            value = "r.float()"
        else:
            value = "r.varint()"
        if f.kind == "bool":
            conv = "v != 0"
        elif f.kind == "enum":
            # protobuf-c reads an enum as an int32: the varint's low 32 bits.
            conv = f"{f.element}(rawValue: .init(truncatingIfNeeded: v))"
        elif f.kind == "scalar" and f.element in ("UInt32", "Int32"):
            conv = f"{f.element}(truncatingIfNeeded: v)"
        elif f.kind == "scalar" and f.element == "Int64":
            conv = "Int64(bitPattern: v)"
        else:
            conv = "v"
        out += [f"            case ({n}, {wire}):", f"                guard let v = {value} else {{ return false }}",
                f"                {target} = {conv}"]
    out.append("            default: return false")
    out.append("            }")
    out.append("        }")
    out.append("        return true")
    out.append("    }")
    out.append("}")
    return out


def varint_value(f, v):
    """A varint field's value `v` as the UInt64 protobuf-c writes (int32 and enums sign-extended)."""
    if f.kind == "bool":
        return f"({v} ? 1 : 0)"
    if f.kind == "enum":
        return f"UInt64(bitPattern: Int64(Int32(truncatingIfNeeded: {v}.rawValue)))"
    return {"UInt64": v, "UInt32": f"UInt64({v})", "Int64": f"UInt64(bitPattern: {v})",
            "Int32": f"UInt64(bitPattern: Int64({v}))"}[f.element]


def direct_field(f, size):
    """The lines that write field `f` (or, with `size`, add its size to `n`), as protobuf-c packs it."""
    n = f.f.number
    v = f"self.{f.swift}"
    if f.repeated and f.kind == "message":
        # By index: `for e in` copies each element out (a retain and a release of each of its strings and arrays).
        if size:
            return [f"for i in {v}.indices {{ n += RawWriter.lengthDelimitedSize({n}, {v}[i].directSize) }}"]
        return [f"for i in {v}.indices {{", f"    out.lengthDelimited({n}, {v}[i].directSize)",
                f"    {v}[i].directWrite(to: &out)", "}"]
    if f.repeated:
        width = 8 if f.element == "Double" else 4
        if size:
            return [f"if !{v}.isEmpty {{ n += RawWriter.lengthDelimitedSize({n}, {width} * {v}.count) }}"]
        raw = "rawDouble" if f.element == "Double" else "rawFloat"
        return [f"if !{v}.isEmpty {{", f"    out.lengthDelimited({n}, {width} * {v}.count)",
                f"    for e in {v} {{ out.{raw}(e) }}", "}"]
    if f.kind == "message":
        if size:
            return [f"if let v = {v} {{ n += RawWriter.lengthDelimitedSize({n}, v.directSize) }}"]
        return [f"if let v = {v} {{", f"    out.lengthDelimited({n}, v.directSize)", "    v.directWrite(to: &out)", "}"]
    # A singular scalar or string: present when set (a proto3 optional), else when not its zero.
    if f.optional and size and f.element in ("Double", "Float"):
        head, value = f"if {v} != nil {{", None  # a fixed width: the value itself is not read
    elif f.optional:
        head, value = f"if let v = {v} {{", "v"
    else:
        zero = {"bool": v, "enum": f"{v}.rawValue != 0", "string": f"!{v}.isEmpty"}.get(f.kind, f"{v} != 0")
        head, value = f"if {zero} {{", v
    if f.kind == "string":
        # protobuf-c's C string ends at the first NUL: a string empty up to it is left out as "" is.
        if size:
            body = [f"    let c = RawWriter.cStringCount({value})", f"    if c > 0 {{ n += RawWriter.lengthDelimitedSize({n}, c) }}"]
        else:
            body = [f"    let c = RawWriter.cStringCount({value})", f"    if c > 0 {{ out.string({n}, {value}, count: c) }}"]
    elif f.element in ("Double", "Float"):
        width, wire, raw = (8, 1, "rawDouble") if f.element == "Double" else (4, 5, "rawFloat")
        body = [f"    n += RawWriter.varintSize({n << 3 | wire}) + {width}"] if size else [
            f"    out.varint({n << 3 | wire})", f"    out.{raw}({value})"]
    else:
        if size and f.kind == "bool":
            body = [f"    n += RawWriter.varintSize({n << 3}) + 1"]
        elif size:
            body = [f"    n += RawWriter.varintSize({n << 3}) + RawWriter.varintSize({varint_value(f, value)})"]
        else:
            body = [f"    out.varint({n << 3})", f"    out.varint({varint_value(f, value)})"]
    return [head] + body + ["}"]


def gen_direct_writer(m, fields):
    """The straight writer of a reply with lists of sub-messages (or of such a sub-message): the bytes
    protobuf-c packs, without building its structs in an arena (an allocation per element, per string and
    per array) and walking its descriptors."""
    out = ["", f"extension SnapbackV1.{m.name}: ProtoDirectMessage {{"]
    ordered = sorted(fields, key=lambda f: f.f.number)
    out.append("    /// The size of the message's bytes.")
    out.append("    var directSize: Int {")
    out.append("        var n = 0" if fields else "        0")
    for f in ordered:
        out += ["        " + line for line in direct_field(f, size=True)]
    if fields:
        out.append("        return n")
    out.append("    }")
    out.append("")
    out.append("    /// The message's bytes as protobuf-c packs them (fields in number order, proto3 defaults left out),")
    out.append("    /// written at `out`'s end (at least `directSize` bytes left).")
    out.append(f"    func directWrite(to {'out' if fields else '_'}: inout RawWriter) {{")
    for f in ordered:
        out += ["        " + line for line in direct_field(f, size=False)]
    out.append("    }")
    out.append("}")
    return out


def read_field(f):
    v = f"c.{f.c}"
    if f.repeated:
        if f.kind in ("scalar", "enum"):
            return [f"self.{f.swift} = ProtoC.array({v}, c.n_{f.c})"]
        if f.kind == "bool":
            return [f"self.{f.swift} = ProtoC.array({v}, c.n_{f.c}).map {{ $0 != 0 }}"]
        if f.kind == "string":
            return [f'self.{f.swift} = try ProtoC.strings({v}, c.n_{f.c}) {{ _path() + "{f.proto}[\\($0)]" }}']
        return [
            f"guard c.n_{f.c} <= maxElements else {{",
            f'    throw .tooLarge("\\(c.n_{f.c}) \\(_path()){f.proto}, more than the \\(maxElements) allowed")',
            "}",
            f"self.{f.swift}.reserveCapacity(c.n_{f.c})",
            f"for i in 0..<c.n_{f.c} {{",
            f"    if let q = {v}[i] {{",
            f'        self.{f.swift}.append(try {f.element}(q, path: {{ _path() + "{f.proto}[\\(i)]." }}, maxElements: maxElements))',
            "    }",
            "}",
        ]
    if f.kind == "string":
        value = f'try ProtoC.string({v}, _path() + "{f.proto}")'
    elif f.kind == "bool":
        value = f"{v} != 0"
    elif f.kind == "message":
        return [f'if let q = {v} {{ self.{f.swift} = try {f.element}(q, path: {{ _path() + "{f.proto}." }}, '
                "maxElements: maxElements) }"]
    else:
        value = v
    if f.optional:
        return [f"if c.{f.case_c} == {f.case_const} {{ self.{f.swift} = {value} }}"]
    return [f"self.{f.swift} = {value}"]


def write_field(f):
    m = f"m.{f.c}"
    if f.repeated:
        if f.kind in ("scalar", "enum"):
            value = f"arena.copy(self.{f.swift})"
        elif f.kind == "bool":
            value = f"arena.copy(self.{f.swift}.map(ProtoC.cBool))"
        elif f.kind == "string":
            value = f"arena.strings(self.{f.swift})"
        else:
            value = f"arena.messages(self.{f.swift})"
        return [f"if !self.{f.swift}.isEmpty {{", f"    m.n_{f.c} = self.{f.swift}.count", f"    {m} = {value}", "}"]
    if f.optional:
        value = {"bool": "ProtoC.cBool(v)", "string": "arena.string(v)"}.get(f.kind, "v")
        return [f"if let v = self.{f.swift} {{", f"    m.{f.case_c} = {f.case_const}", f"    {m} = {value}", "}"]
    if f.kind == "string":
        # protobuf-c's init leaves the empty string in place: nothing to copy.
        return [f"if !self.{f.swift}.isEmpty {{ {m} = arena.string(self.{f.swift}) }}"]
    if f.kind == "message":
        return [f"if let v = self.{f.swift} {{ {m} = arena.message(v) }}"]
    if f.kind == "bool":
        return [f"{m} = ProtoC.cBool(self.{f.swift})"]
    return [f"{m} = self.{f.swift}"]


def sample_value(model, f, seed, depth):
    """A value that is not the field's default, different per field (`seed`)."""
    if f.kind == "scalar":
        one = {"Double": f"{seed}.5", "Float": f"{seed}.5"}.get(f.element, str(seed))
    elif f.kind == "bool":
        one = "true"
    elif f.kind == "string":
        one = f'"{f.proto}-{seed}-é"'
    elif f.kind == "enum":
        one = f"{f.element}(rawValue: {max(v.number for v in f.enum.value)})"
    else:
        one = f"{f.element}.sample{depth + 1}"
    if f.repeated:
        return f"[{one}, {one}]" if f.kind != "message" else f"[{one}, {f.element}()]"
    return one


def gen_samples(model):
    out = [SPDX, "// Generated by scripts/gen-wire.py from proto/snapback/v1. DO NOT EDIT.", "",
           "import CSnapbackProto", "", "@testable import SnapbackWire", "",
           "// Per message, a value with every field set (each oneof to its first case), to its own values:",
           "// what the round-trip tests pack with protobuf-c and read back. `sample1` is a sub-message's.", ""]
    names = sorted(model.messages)
    out.append("/// A generated message with a value of it that sets every field.")
    out.append("protocol Sampled: ProtoCMessage {")
    out.append("    /// Every field set, each oneof to its first case.")
    out.append("    static var sample: Self { get }")
    out.append("    /// `sample`, then `sample` with each other case of each oneof.")
    out.append("    static var samples: [Self] { get }")
    out.append("}")
    out.append("")
    out.append("/// Every generated message.")
    out.append("let everyGeneratedMessage: [any Sampled.Type] = [")
    for key in names:
        m = model.messages[key]
        out.append(f"    SnapbackV1.{m.name}.self,")
    out.append("]")
    out.append("")
    for key in names:
        m = model.messages[key]
        fields = [Field(model, m, f) for f in m.field]
        out.append(f"extension SnapbackV1.{m.name}: Sampled {{")
        for depth, var in ((0, "sample"), (1, "sample1")):
            out.append(f"    static var {var}: Self {{")
            body = []
            done_oneofs = set()
            for i, f in enumerate(fields):
                if f.kind == "message" and depth == 1:
                    continue  # sub-messages one level deep, not more
                value = sample_value(model, f, i + 1, depth)
                if f.oneof:
                    if f.oneof in done_oneofs:
                        continue
                    done_oneofs.add(f.oneof)
                    body.append(f"        v.{lower_camel(f.oneof)} = .{f.swift}({value})")
                else:
                    body.append(f"        v.{f.swift} = {value}")
            out += ["        var v = Self()"] + body + ["        return v"] if body else ["        Self()"]
            out.append("    }")
        others = [f for f in fields if f.oneof]
        firsts = {}
        for f in others:
            firsts.setdefault(f.oneof, f)
        out.append("    static var samples: [Self] {")
        body = []
        for i, f in enumerate(fields):
            if f.oneof and firsts[f.oneof] is not f:
                body.append("        v = sample" if body else "        var v = sample")
                body.append(f"        v.{lower_camel(f.oneof)} = .{f.swift}({sample_value(model, f, i + 1, 0)})")
                body.append("        all.append(v)")
        out += ["        var all = [sample]"] + body + ["        return all"] if body else ["        [sample]"]
        out.append("    }")
        out.append("}")
        out.append("")
    return out


def method_case(method):
    """A method's `WireMethod` case: its request's name without `Request` when that starts with the rpc's
    name (Bookmarks' Get takes a GetBookmarkRequest: `getBookmark`), else the rpc's name (`getStatus`)."""
    request = Model.short(method.input_type)
    name = request[: -len("Request")] if request.startswith(method.name) and request.endswith("Request") else method.name
    return name[:1].lower() + name[1:]


def gen_methods(model):
    """`WireService` and `WireMethod`: the services by the id their leading comment gives ("Service id 1."),
    and every rpc by `service_id << 8 | index`, the index its position in the service."""
    import re
    services = []
    for f in model.files:
        locations = {tuple(loc.path): loc for loc in f.source_code_info.location}
        for i, service in enumerate(f.service):
            loc = locations.get((6, i))
            found = re.search(r"Service id (\d+)\.", loc.leading_comments if loc else "")
            if not found:
                sys.exit(f"gen-wire: service {service.name}: no \"Service id N.\" in its leading comment")
            services.append((int(found.group(1)), service))
    services.sort(key=lambda x: x[0])
    if [sid for sid, _ in services] != list(range(len(services))):
        sys.exit("gen-wire: service ids are not 0, 1, 2, …")
    out = [SPDX, "// Generated by scripts/gen-wire.py from proto/snapback/v1. DO NOT EDIT.", ""]
    out.append("/// The services of the snapback protocol, by the id that forms the high byte of a method id (the")
    out.append("/// \"Service id N.\" of each service's comment in proto/snapback/v1).")
    out.append("public enum WireService: UInt8, Sendable, CaseIterable, CustomStringConvertible {")
    for sid, service in services:
        out.append(f"    case {service.name[:1].lower() + service.name[1:]} = {sid}")
    out.append("")
    out.append('    /// The fully qualified service name: "snapback.v1.Timeline".')
    out.append("    public var name: String {")
    out.append("        switch self {")
    for sid, service in services:
        out.append(f'        case .{service.name[:1].lower() + service.name[1:]}: "snapback.v1.{service.name}"')
    out.append("        }")
    out.append("    }")
    out.append("")
    out.append("    public var description: String { name }")
    out.append("}")
    out.append("")
    out.append("/// Every method of the protocol, by the id carried in the frame header's `method` field:")
    out.append("/// `service_id << 8 | method_index`, where `method_index` is the 0-based position of the rpc in its service")
    out.append("/// declaration in `proto/snapback/v1/*.proto`. `WireMethod(rawValue:)` returns nil for an id the server")
    out.append("/// does not know (answered UNIMPLEMENTED).")
    out.append("public enum WireMethod: UInt16, Sendable, CaseIterable, CustomStringConvertible {")
    rows = []
    for sid, service in services:
        out.append(f"    // snapback.v1.{service.name} (service {sid})")
        for index, method in enumerate(service.method):
            rows.append((method_case(method), method, service))
            out.append(f"    case {method_case(method)} = 0x{sid << 8 | index:04X}")
        out.append("")
    out.append("    /// The method with this index in this service, if there is one.")
    out.append("    public init?(service: WireService, index: UInt8) {")
    out.append("        self.init(rawValue: UInt16(service.rawValue) << 8 | UInt16(index))")
    out.append("    }")
    out.append("")
    out.append("    public var service: WireService {")
    out.append("        // Every case's high byte is a service id.")
    out.append("        WireService(rawValue: UInt8(truncatingIfNeeded: rawValue >> 8))!")
    out.append("    }")
    out.append("")
    out.append("    /// The 0-based position of the rpc in its service.")
    out.append("    public var index: UInt8 { UInt8(truncatingIfNeeded: rawValue) }")
    out.append("")
    out.append("    /// Whether the method is a session event (ReportPlayhead … CloseSession): it answers `EventReply`.")
    events = [i for i, (c, m, _) in enumerate(rows) if Model.short(m.output_type) == "EventReply"]
    if events != list(range(events[0], events[-1] + 1)):
        sys.exit("gen-wire: the methods that answer EventReply are not one run of a service's rpcs")
    first, last = rows[events[0]][0], rows[events[-1]][0]
    out.append(f"    public var isEvent: Bool {{ rawValue >= WireMethod.{first}.rawValue && rawValue <= WireMethod.{last}.rawValue }}")
    out.append("")
    out.append('    /// The rpc\'s name in its service: "SeekEnded".')
    out.append("    public var methodName: String {")
    out.append("        switch self {")
    for c, m, _ in rows:
        out.append(f'        case .{c}: "{m.name}"')
    out.append("        }")
    out.append("    }")
    out.append("")
    out.append('    /// The fully qualified name, gRPC style: "snapback.v1.Timeline/SeekEnded".')
    out.append('    public var name: String { service.name + "/" + methodName }')
    out.append("")
    out.append("    public var description: String { name }")
    out.append("}")
    return out


# The requests that are not their generated message in `WireRequest`: per rpc, the Swift type of its case
# and how its body is read (the domain types of SnapbackWire: an OpenSession is checked and resolved into
# a session's configuration, a Merge's records against the core's limits).
REQUEST_DOMAIN_TYPES = {
    "OpenSession": ("OpenSessionRequest", "OpenSessionRequest.decode(body, defaultPreset: defaultPreset, maxBreaks: maxBreaks)"),
    "Merge": ("SyncMerge", "SyncMerge.decode(body)"),
}
# Requests boxed in `WireRequest` (the domain ones are too): large and once per connection or session, so
# that a request moves as a few words, as the hot path's events do.
BOXED_REQUESTS = {"Hello"}


def service_id(f, index):
    """The id of `f`'s service `index`, as its leading comment gives it ("Service id 1.")."""
    import re
    locations = {tuple(loc.path): loc for loc in f.source_code_info.location}
    return int(re.search(r"Service id (\d+)\.", locations[(6, index)].leading_comments).group(1))


def gen_requests(model):
    """`WireRequest`: a request body as Swift values, one case per rpc but the session events, which share
    `.event`; its method, its reader (but the events') and its writer (the events' by hand)."""
    rows = []
    for f in model.files:
        locations = {tuple(loc.path): loc for loc in f.source_code_info.location}
        for si, service in enumerate(f.service):
            for mi, method in enumerate(service.method):
                request = model.messages[method.input_type]
                if method.name in REQUEST_DOMAIN_TYPES:
                    kind = "domain"
                elif Model.short(method.output_type) == "EventReply" and method.name != "CloseSession":
                    kind = "event"
                elif not request.field:
                    kind = "empty"
                else:
                    kind = "message"
                rows.append((service_id(f, si), mi, method_case(method), method, request, kind,
                             comment_of(locations, [6, si, 2, mi])))
    rows.sort(key=lambda r: (r[0], r[1]))
    out = [SPDX, "// Generated by scripts/gen-wire.py from proto/snapback/v1. DO NOT EDIT.", "",
           "import SnapbackTimeline", ""]
    out.append("/// A request body as Swift values: one case per rpc, the generated request message, but the session")
    out.append("/// events, which share `.event` (the event as the timeline takes it: WireRequest+Events.swift), and the")
    out.append("/// requests a domain type reads (`OpenSessionRequest`, `SyncMerge`). The daemon decodes with")
    out.append("/// `decode(method:body:defaultPreset:maxBreaks:)`; a client encodes with `encode(into:)` and sends")
    out.append("/// `method` in the frame header.")
    out.append("public enum WireRequest: Sendable, Equatable {")
    event_done = False
    for _, _, case, method, request, kind, comments in rows:
        if kind == "event":
            if not event_done:
                out.append("    /// A session event (ReportPlayhead … Pause) as the timeline takes it. (`playerDisconnected` and")
                out.append("    /// `timerFired` are the daemon's own events and never travel; `.closed` travels as CloseSession.)")
                out.append("    case event(sessionId: UInt64, TimelineEvent)")
                event_done = True
            continue
        out += doc(comments, "    ")
        if kind == "domain":
            out.append(f"    indirect case {case}({REQUEST_DOMAIN_TYPES[method.name][0]})")
        elif kind == "empty":
            out.append(f"    case {case}")
        else:
            boxed = "indirect " if method.name in BOXED_REQUESTS else ""
            out.append(f"    {boxed}case {case}(SnapbackV1.{request.name})")
    out.append("")
    out.append("    /// The method the request is sent as. Traps for `.event` with `playerDisconnected` or `timerFired`,")
    out.append("    /// which are not wire events (a programming error).")
    out.append("    public var method: WireMethod {")
    out.append("        switch self {")
    out.append("        case .event(_, let event): WireRequest.method(for: event)")
    for _, _, case, method, request, kind, _ in rows:
        if kind != "event":
            out.append(f"        case .{case}: .{case}")
    out.append("        }")
    out.append("    }")
    for _, _, case, method, request, kind, _ in rows:
        if kind != "message":
            continue
        fields = [Field(model, request, f) for f in request.field]
        if any(f.oneof or f.kind in ("message", "enum") or f.repeated for f in fields):
            continue
        args = ", ".join(f"{f.swift}: {f.swift_type} = {f.default}" for f in fields)
        values = ", ".join(f"{f.swift}: {f.swift}" for f in fields)
        out.append("")
        out.append(f"    /// `.{case}` of a `{request.name}` with these fields.")
        out.append(f"    public static func {case}({args}) -> WireRequest {{ .{case}(.init({values})) }}")
    out.append("}")
    out.append("")
    out.append("extension WireRequest {")
    out.append("    /// Every request but the round trip's, read by its message's reader (the events by `decodeEvent`).")
    out.append("    @inline(never)")
    out.append("    static func decodeFields(")
    out.append("        method: WireMethod, body: UnsafeRawBufferPointer, defaultPreset: AdPolicy.Preset, maxBreaks: Int")
    out.append("    ) throws(WireError) -> WireRequest {")
    out.append("        switch method {")
    events = [r[2] for r in rows if r[5] == "event"]
    out.append("        case " + ", ".join(f".{c}" for c in events) + ":")
    out.append("            return try decodeEvent(method: method, body: body, maxBreaks: maxBreaks)")
    for _, _, case, method, request, kind, _ in rows:
        if kind == "event":
            continue
        out.append(f"        case .{case}:")
        if kind == "domain":
            out.append(f"            return .{case}(try {REQUEST_DOMAIN_TYPES[method.name][1]})")
        elif kind == "empty":
            out.append(f"            _ = try SnapbackV1.{request.name}.decode(body)")
            out.append(f"            return .{case}")
        else:
            out.append(f"            return .{case}(try SnapbackV1.{request.name}.decode(body))")
    out.append("        }")
    out.append("    }")
    out.append("")
    out.append("    /// Appends the request's body to `out`; send it with `method` in the frame header. Returns its length.")
    out.append("    @discardableResult")
    out.append("    public func encode(into out: inout [UInt8]) -> Int {")
    out.append("        switch self {")
    out.append("        case .event(let sessionId, let event): WireRequest.encode(sessionId: sessionId, event: event, into: &out)")
    for _, _, case, method, request, kind, _ in rows:
        if kind == "event":
            continue
        if kind == "empty":
            out.append(f"        case .{case}: SnapbackV1.{request.name}().encode(into: &out)")
        else:
            out.append(f"        case .{case}(let m): m.encode(into: &out)")
    out.append("        }")
    out.append("    }")
    out.append("}")
    return out


# The `PolicyOverrides.ProtoRow` case of a PolicyOverrides field, by its proto type.
POLICY_ROWS = {FD.TYPE_ENUM: "choice", FD.TYPE_BOOL: "flag", FD.TYPE_DOUBLE: "seconds", FD.TYPE_UINT32: "count"}


def gen_policy_rows(model, m):
    """`PolicyOverrides.protoRows`: the members of the generated message in field order, which is the
    order of `AdPolicy.fields` (`ProtoTableTests` checks each row's name against its field's)."""
    rows = []
    for f in sorted(m.field, key=lambda f: f.number):
        if f.type not in POLICY_ROWS:
            sys.exit(f"gen-wire: PolicyOverrides.{f.name}: no policy row for type {f.type}")
        rows.append(f".{POLICY_ROWS[f.type]}(\\.{lower_camel(f.name)})")
    out = ["", "extension PolicyOverrides {",
           "    /// The member of `AdPolicy.fields[i]` is `protoRows[i]`: the message's fields in number order.",
           "    static let protoRows: [ProtoRow] = ["]
    out += [f"        {r}," for r in rows]
    out += ["    ]", "}"]
    return out


def json_name(proto_name):
    """protobuf's ToJsonName: each `_` dropped and the letter after it upper-cased."""
    out, upper = "", False
    for ch in proto_name:
        if ch == "_":
            upper = True
        else:
            out += ch.upper() if upper else ch
            upper = False
    return out


def gen_json_message(model, m):
    """A message's canonical JSON encoder and bounded decoder (`ProtoJSONMessage`): a call per field to the
    writer's and the reader's `field`, which know each kind (`ProtoJSONValue`)."""
    fields = [Field(model, m, f) for f in m.field]
    units = []  # (first field number, kind, payload): a plain field, or a whole oneof
    oneofs = {}
    for f in fields:
        if f.oneof:
            oneofs.setdefault(f.oneof, []).append(f)
        else:
            units.append((f.f.number, "field", f))
    for name, members in oneofs.items():
        units.append((min(x.f.number for x in members), "oneof", (name, members)))
    units.sort(key=lambda u: u[0])
    if len(units) > 64:
        sys.exit(f"gen-wire: {m.name}: more than 64 fields and oneofs for the JSON reader's bits")
    out = ["", f"extension SnapbackV1.{m.name}: ProtoJSONMessage {{"]
    out.append("    public func writeJSON(to w: inout ProtoJSONWriter) {")
    out.append("        w.beginObject()")
    for _, kind, u in units:
        if kind == "oneof":
            name, members = u
            out.append(f"        switch self.{lower_camel(name)} {{")
            for f in members:
                out.append(f'        case .{f.swift}(let v)?: w.field("{json_name(f.proto)}", Optional(v))')
            out.append("        case nil: break")
            out.append("        }")
        else:
            out.append(f'        w.field("{json_name(u.proto)}", self.{u.swift})')
    out.append("        w.endObject()")
    out.append("    }")
    out.append("")
    out.append("    public init(json r: inout ProtoJSONReader) throws(ProtoJSONError) {")
    out.append("        self.init()")
    if units:
        out.append("        var seen: UInt64 = 0")
    out.append("        try r.beginObject()")
    out.append("        while let key = try r.nextKey() {")
    if units:
        out.append("            switch key {")
        for bit, (_, kind, u) in enumerate(units):
            members = u[1] if kind == "oneof" else [u]
            for f in members:
                names = [json_name(f.proto)] + ([f.proto] if f.proto != json_name(f.proto) else [])
                case = "            case " + ", ".join(f'"{n}"' for n in names) + ":"
                if kind == "oneof":
                    out.append(case)
                    out.append(f"                try r.once(&seen, {bit}, key)")
                    out.append(f"                if let v = try {f.element}.readJSONValue(&r) {{ self.{lower_camel(u[0])} = .{f.swift}(v) }}")
                else:
                    out.append(f"{case} try r.field(&self.{f.swift}, &seen, {bit}, key)")
        out.append(f'            default: throw r.unknownField(key, in: "snapback.v1.{m.name}")')
        out.append("            }")
    else:
        out.append(f'            throw r.unknownField(key, in: "snapback.v1.{m.name}")')
    out.append("        }")
    out.append("    }")
    out.append("}")
    return out


def gen_json_file(model, f):
    out = [SPDX, f"// Generated by scripts/gen-wire.py from proto/{f.name}. DO NOT EDIT.", "",
           "import CSnapbackProto"]
    if any(m.name in DOMAIN_TYPES for m in f.message_type):
        out.append("import SnapbackTimeline")
    out += ["import SnapbackWire"]
    for e in f.enum_type:
        c = Model.c_struct(e.name)
        out += ["", f"extension {c}: ProtoJSONEnum {{",
                "    public static let protoNames: [(number: Int32, name: String)] = ["]
        out += [f'        ({v.number}, "{v.name}"),' for v in e.value]
        out += ["    ]", "}"]
    for m in f.message_type:
        out += gen_json_message(model, m)
    return out


def gen_json_methods(model):
    """`everyProtoJSONMethod`: each rpc's bodies by their message types, for a JSON front end (snapback-web)
    that forwards a method by its `WireMethod` case. A server stream's RESPONSE body is the message named
    `<Rpc>Reply` when the package has one (WatchChangesReply), else empty (WatchDecisions); its PUSH bodies
    are the rpc's output type."""
    out = [SPDX, "// Generated by scripts/gen-wire.py from proto/snapback/v1. DO NOT EDIT.", "",
           "import SnapbackWire", "",
           "/// Every method of the protocol with its message types: request, RESPONSE body (nil: empty) and, for a",
           "/// server stream, its PUSH bodies.",
           "public let everyProtoJSONMethod: [ProtoJSONMethod] = ["]
    for f in model.files:
        for service in f.service:
            for method in service.method:
                request = f"SnapbackV1.{Model.short(method.input_type)}.self"
                if method.server_streaming:
                    start = f".snapback.v1.{method.name}Reply"
                    reply = f"SnapbackV1.{Model.short(start)}.self" if start in model.messages else "nil"
                    stream = f"SnapbackV1.{Model.short(method.output_type)}.self"
                else:
                    reply, stream = f"SnapbackV1.{Model.short(method.output_type)}.self", "nil"
                case = method_case(method)
                out.append(f'    ProtoJSONMethod(.{case}, "{case}", request: {request}, reply: {reply}, stream: {stream}),')
    out.append("]")
    return out


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    fds = descriptor_pb2.FileDescriptorSet()
    with open(sys.argv[1], "rb") as f:
        fds.ParseFromString(f.read())
    model = Model(fds)
    sources, json_sources, tests = sys.argv[2], sys.argv[3], sys.argv[4]
    for d in (sources, json_sources, tests):
        os.makedirs(d, exist_ok=True)
    for f in model.files:
        base = os.path.splitext(os.path.basename(f.name))[0]
        locations = {tuple(loc.path): loc for loc in f.source_code_info.location}
        imports = ["CSnapbackProto"]
        if any(m.name in DOMAIN_TYPES for m in f.message_type):
            imports.append("SnapbackTimeline")
        out = [SPDX, f"// Generated by scripts/gen-wire.py from proto/{f.name}. DO NOT EDIT.", ""]
        out += [f"import {i}" for i in imports] + [""]
        for i, m in enumerate(f.message_type):
            field_comments = {x.number: comment_of(locations, [4, i, 2, j]) for j, x in enumerate(m.field)}
            out += gen_message(model, m, comment_of(locations, [4, i]), field_comments)
            if m.name == "PolicyOverrides":
                out += gen_policy_rows(model, m)
            out.append("")
        with open(os.path.join(sources, f"{base}.pb.swift"), "w") as o:
            o.write("\n".join(out).rstrip() + "\n")
        with open(os.path.join(json_sources, f"{base}.json.swift"), "w") as o:
            o.write("\n".join(gen_json_file(model, f)).rstrip() + "\n")
    with open(os.path.join(json_sources, "Messages.json.swift"), "w") as o:
        names = sorted(model.messages)
        lines = [SPDX, "// Generated by scripts/gen-wire.py from proto/snapback/v1. DO NOT EDIT.", "",
                 "import SnapbackWire", "", "/// Every message of the protocol, in the order of their full names.",
                 "public let everyProtoJSONMessage: [any ProtoJSONMessage.Type] = ["]
        lines += [f"    SnapbackV1.{model.messages[k].name}.self," for k in names]
        lines += ["]"]
        o.write("\n".join(lines) + "\n")
    with open(os.path.join(json_sources, "Methods.json.swift"), "w") as o:
        o.write("\n".join(gen_json_methods(model)) + "\n")
    with open(os.path.join(sources, "WireMethod.swift"), "w") as o:
        o.write("\n".join(gen_methods(model)).rstrip() + "\n")
    with open(os.path.join(sources, "WireRequest.swift"), "w") as o:
        o.write("\n".join(gen_requests(model)).rstrip() + "\n")
    with open(os.path.join(tests, "Samples.swift"), "w") as o:
        o.write("\n".join(gen_samples(model)).rstrip() + "\n")


if __name__ == "__main__":
    main()
