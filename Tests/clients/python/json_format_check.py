#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Checks snapback's generated JSON encoders and decoders against protobuf's own, json_format.

    json_format_check.py PROTO_DIR < LINES

Each line of input is `NAME<TAB>HEX<TAB>JSON`: a message's full name (snapback.v1.Push), its binary
form in hex and the JSON the Swift encoder wrote for it. For each line this writes one line, `ok<TAB>J`
with J what json_format writes for the binary message (for the Swift decoder to read back), or
`error<TAB>WHY` when the Swift JSON is not json_format's (as parsed JSON values: member order and number
spelling aside) or json_format does not read it back as the binary message.

Needs protoc-c (the descriptors of PROTO_DIR/snapback/v1/*.proto) and python3-protobuf for /usr/bin/python3.
"""

import glob
import json
import os
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory


def classes(proto_dir):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "descriptors.pb")
        files = sorted(os.path.relpath(p, proto_dir) for p in glob.glob(os.path.join(proto_dir, "snapback/v1/*.proto")))
        subprocess.run(["protoc-c", "--proto_path=.", "--include_imports", f"--descriptor_set_out={out}"] + files,
                       cwd=proto_dir, check=True)
        fds = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            fds.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    factory = message_factory.MessageFactory(pool)

    def get(name):
        desc = pool.FindMessageTypeByName(name)
        if hasattr(message_factory, "GetMessageClass"):
            return message_factory.GetMessageClass(desc)
        return factory.GetPrototype(desc)

    return get


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    get = classes(sys.argv[1])
    for line in sys.stdin:
        name, hexed, swift_json = line.rstrip("\n").split("\t", 2)
        cls = get(name)
        message = cls.FromString(bytes.fromhex(hexed))
        expected = json_format.MessageToDict(message)
        try:
            got = json.loads(swift_json)
        except ValueError as e:
            print(f"error\t{name}: the Swift JSON is not JSON ({e}): {swift_json}")
            continue
        if got != expected:
            print(f"error\t{name}: Swift wrote {swift_json}, json_format {json.dumps(expected, ensure_ascii=False)}")
            continue
        try:
            parsed = json_format.Parse(swift_json, cls())
        except json_format.ParseError as e:
            print(f"error\t{name}: json_format does not read the Swift JSON ({e}): {swift_json}")
            continue
        if parsed != message:
            print(f"error\t{name}: json_format reads the Swift JSON as another message: {swift_json}")
            continue
        print("ok\t" + json_format.MessageToJson(message, indent=None))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
