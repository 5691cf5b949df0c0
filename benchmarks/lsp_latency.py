"""Latency of `ms-lint server`: how long after opening or editing a ~5,000-line file its diagnostics arrive.

    python benchmarks/lsp_latency.py [--source mindcv|generated] [--lines 5000] [--edits 30] [--opens 5]

The server runs as users run it (`python -m ms_lint.cli server`, stdio), driven by raw JSON-RPC over its pipes. The
file is built from real code: the model files of mindcv 0.3.0 (downloaded once, see corpora.py) concatenated until
they reach `--lines`, placed in a copy of the mindcv package so that the project index has a real project to read;
`--source generated` instead repeats a small Cell model (no download). It prints, as median and p90:

* first diagnostics: `didOpen` to `publishDiagnostics` (every open lints the whole file);
* update after an edit: `didChange` (a one-line edit, full text as Neovim and VS Code send it with this server) to the
  `publishDiagnostics` of that version, raw and without the server's debounce (`ms_lint.lsp.DEBOUNCE_SECONDS`: the
  server waits that long after the last change before linting, so typing does not lint every keystroke);
* save: `didSave` to `publishDiagnostics` (no debounce).
"""
from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from corpora import CORPORA, fetch  # noqa: E402

from ms_lint.lsp import DEBOUNCE_SECONDS  # noqa: E402

GENERATED = '''\
class Block{n}(nn.Cell):
    def __init__(self, channels={n}):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3)
        self.norm = nn.BatchNorm2d(channels)
        self.layers = [nn.Dense(4, 4), nn.Dense(4, 4)]
        self.scale = np.sqrt(channels)

    def construct(self, x):
        y = self.norm(self.conv(x))
        for layer in self.layers:
            y = layer(y)
        if y.shape[0] > 1:
            y = y * self.scale
        return np.exp(y) + x


'''


def mindcv_file(lines: int, directory: Path) -> Path:
    """A copy of the mindcv package with `models/latency_bench.py`: its model files concatenated to `lines`."""
    package = Path(fetch("mindcv", CORPORA["mindcv"]))
    project = directory / "project"
    shutil.copytree(package, project / "mindcv")
    (project / "pyproject.toml").write_text('[project]\nname = "bench"\nversion = "0"\n', encoding="utf-8")
    parts, count = [], 0
    for path in sorted((package / "models").glob("*.py")):
        text = "".join(line for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
                       if not line.startswith("from __future__"))  # legal only at the top of a module
        parts.append(f"# ----- {path.name}\n{text}\n")
        count += text.count("\n") + 2
        if count >= lines:
            break
    target = project / "mindcv" / "models" / "latency_bench.py"
    target.write_text("".join(parts), encoding="utf-8")
    return target


def generated_file(lines: int, directory: Path) -> Path:
    project = directory / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "bench"\nversion = "0"\n', encoding="utf-8")
    text = "import numpy as np\nfrom mindspore import nn\n\n\n"
    n = 0
    while text.count("\n") < lines:
        text += GENERATED.format(n=n)
        n += 1
    target = project / "models.py"
    target.write_text(text, encoding="utf-8")
    return target


class Server:
    """`ms-lint server` over pipes: a thread reads every message and stamps it with its arrival time."""

    def __init__(self, command):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.messages: "queue.Queue[tuple]" = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        stream = self.process.stdout
        while True:
            length = None
            while True:
                header = stream.readline()
                if not header:
                    return
                if header in (b"\r\n", b"\n"):
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            body = json.loads(stream.read(length))
            self.messages.put((time.perf_counter(), body))

    def send(self, message: dict) -> float:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()
        return time.perf_counter()

    def notify(self, method: str, params: dict) -> float:
        return self.send({"method": method, "params": params})

    def request(self, method: str, params: dict):
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self.next_id and "method" not in m)[1]

    def wait(self, matches, timeout: float = 120.0):
        deadline = time.perf_counter() + timeout
        while True:
            stamp, message = self.messages.get(timeout=max(deadline - time.perf_counter(), 0.001))
            if "method" in message and "id" in message:  # a request from the server: answer it
                self.send({"id": message["id"], "result": None})
            if matches(message):
                return stamp, message

    def diagnostics(self, uri: str, version: int):
        return self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                         and m["params"]["uri"] == uri and m["params"].get("version") == version)


def summary(label: str, values) -> str:
    values = sorted(values)
    p90 = values[min(len(values) - 1, round(0.9 * (len(values) - 1)))]
    return (f"{label:<42} median {statistics.median(values) * 1000:7.1f} ms   p90 {p90 * 1000:7.1f} ms   "
            f"({len(values)} runs)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", choices=("mindcv", "generated"), default="mindcv")
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--edits", type=int, default=30)
    parser.add_argument("--opens", type=int, default=5)
    parser.add_argument("--command", default=f"{sys.executable} -m ms_lint.cli server",
                        help="the server command (default: this interpreter's ms-lint server)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as directory:
        path = (mindcv_file if args.source == "mindcv" else generated_file)(args.lines, Path(directory))
        text = path.read_text(encoding="utf-8")
        uri = path.as_uri()
        root = path.parent if args.source == "generated" else path.parents[2]
        print(f"file: {path.relative_to(directory)} ({text.count(chr(10))} lines, {len(text)} characters), "
              f"{args.source}; Python {sys.version.split()[0]}")
        server = Server(args.command.split())
        started = time.perf_counter()
        server.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {
            "textDocument": {"synchronization": {"didSave": True},
                             "publishDiagnostics": {"versionSupport": True}}}})
        server.notify("initialized", {})
        print(f"server start (initialize answered): {(time.perf_counter() - started) * 1000:.0f} ms")

        opens, found = [], None
        for run in range(args.opens):
            sent = server.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": text}})
            stamp, message = server.diagnostics(uri, 1)
            opens.append(stamp - sent)
            found = len(message["params"]["diagnostics"])
            if run < args.opens - 1:
                server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
                server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                            and m["params"]["uri"] == uri and not m["params"]["diagnostics"])
        print(f"diagnostics in the file: {found}")

        lines = text.splitlines(keepends=True)
        middle = len(lines) // 2
        changes, saves = [], []
        for version in range(2, args.edits + 2):
            edited = lines[:middle] + [f"# edit {version}\n"] + lines[middle:]  # a different text each time
            sent = server.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": "".join(edited)}]})
            stamp, _ = server.diagnostics(uri, version)
            changes.append(stamp - sent)
        for _ in range(args.opens):
            sent = server.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
            stamp, _ = server.diagnostics(uri, args.edits + 1)
            saves.append(stamp - sent)

        print(summary("first diagnostics (didOpen)", opens))
        print(summary("update after an edit (didChange), raw", changes))
        print(summary(f"  without the {DEBOUNCE_SECONDS * 1000:.0f} ms debounce",
                      [change - DEBOUNCE_SECONDS for change in changes]))
        print(summary("save (didSave)", saves))
        server.request("shutdown", {})
        server.notify("exit", {})
        server.process.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
