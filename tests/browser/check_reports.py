#!/usr/bin/env python3
"""Opens each kind of `--html` report (run, sweep, compare) in headless Chromium and checks it.

For each page: no console error, no uncaught exception, no request leaving the file (the page must
work offline); every chart (window.strataCharts) has series with data and painted pixels; every
number shown (elements with data-key) equals the JSON report's value to the 4 significant digits
shown; then a screenshot goes to WORK/screenshot-KIND.png.

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: NUL-terminated
JSON on file descriptors 3 and 4), so nothing beyond Python's standard library and Debian's
`chromium` is needed. Without chromium the test is skipped (exit 77), except under CI=true, where it
fails: CI installs it (tools/install-deps).
"""

import argparse
import base64
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless Chromium, spoken to over the DevTools pipe."""

    def __init__(self, executable, profile):
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # The child's ends move above 3 and 4 first, so that putting them on 3 and 4 overwrites neither;
        # preexec_fn runs before the child closes what pass_fds does not keep.
        import fcntl
        high_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
        high_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
        os.close(to_child_r)
        os.close(from_child_w)
        to_child_r, from_child_w = high_r, high_w

        def wire():
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        args = [executable, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--hide-scrollbars", "--user-data-dir=" + profile, "about:blank"]
        self.proc = subprocess.Popen(args, pass_fds=(3, 4), preexec_fn=wire,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self.events = []

    def close(self):
        try:
            self.send("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)

    def _read_message(self, deadline):
        while b"\0" not in self._buffer:
            if time.time() > deadline:
                raise TimeoutError("no answer from chromium")
            import select
            ready, _, _ = select.select([self._from_child], [], [], max(0.0, deadline - time.time()))
            if not ready:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe (exit code %s)" % self.proc.poll())
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=None, timeout=60):
        self._next_id += 1
        mid = self._next_id
        message = {"id": mid, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._to_child, data):]
        deadline = time.time() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == mid:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method, timeout=60):
        deadline = time.time() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e["method"] == method:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))


CHECK = """JSON.stringify({
  ready: window.strataReady === true,
  charts: (window.strataCharts || []).map(function (c) {
    var o = c.chart.getOption(), points = 0, painted = 0;
    (o.series || []).forEach(function (s) { points += (s.data || []).length; });
    var canvas = c.chart.getDom().querySelector('canvas');
    if (canvas && canvas.width && canvas.height) {
      var px = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      for (var i = 3; i < px.length; i += 16) if (px[i] > 0) painted++;
    }
    return { name: c.name, series: (o.series || []).length, points: points, painted: painted };
  }),
  numbers: Array.prototype.map.call(document.querySelectorAll('[data-key]'), function (e) {
    return { key: e.getAttribute('data-key'), text: e.textContent, point: e.getAttribute('data-point'),
             side: e.getAttribute('data-side') };
  })
})"""

BINARY = {"B": 1, "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30, "TiB": 2 ** 40, "PiB": 2 ** 50}
TIME = {"\u00b5s": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
PREFIX = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


def parse_shown(text):
    """The value a formatted number stands for: '12.3 GiB', '4.5 ms', '37.2 %', '1.2 M tokens/s', 'yes'."""
    if text == "-":
        return None
    if text in ("yes", "no"):
        return text == "yes"
    m = re.fullmatch(r"(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)(?: (.*))?", text)
    if not m:
        return text
    value, unit = float(m.group(1)), m.group(2) or ""
    if unit in BINARY:
        return value * BINARY[unit]
    if unit in TIME:
        return value * TIME[unit]
    if unit == "%":
        return value / 100
    head = unit.split(" ", 1)[0]
    if head in PREFIX:
        return value * PREFIX[head]
    return value


def same(shown, expected, text):
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        return shown == expected or (isinstance(expected, str) and text == expected)
    if not isinstance(shown, (int, float)) or isinstance(shown, bool):
        return False
    # 4 significant digits shown: the rounding is at most half a unit of the 4th digit.
    return math.isclose(shown, expected, rel_tol=6e-4, abs_tol=1e-12)


def lookup(obj, dotted):
    for part in dotted.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return KeyError
        obj = obj[part]
    return obj


def flatten(obj, prefix="", out=None):
    out = {} if out is None else out
    for k, v in obj.items():
        key = prefix + "." + k if prefix else k
        if isinstance(v, dict):
            flatten(v, key, out)
        elif not isinstance(v, list):
            out[key] = v
    return out


def check_page(browser, html, expected_of, screenshot):
    """Loads `html`, checks it, writes `screenshot`. `expected_of(number)` gives the JSON value."""
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Runtime", "Log", "Network", "Page"):
        browser.send(domain + ".enable", session=session)
    browser.send("Emulation.setDeviceMetricsOverride",
                 {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False}, session=session)
    browser.events.clear()
    browser.send("Page.navigate", {"url": "file://" + os.path.abspath(html)}, session=session)
    browser.wait_event("Page.loadEventFired", timeout=120)
    result = None
    deadline = time.time() + 60
    while time.time() < deadline:
        reply = browser.send("Runtime.evaluate", {"expression": CHECK, "returnByValue": True}, session=session)
        if "exceptionDetails" in reply:
            fail("%s: the check itself threw: %s" % (html, reply["exceptionDetails"]))
        result = json.loads(reply["result"]["value"])
        if result["ready"]:
            break
        time.sleep(0.2)
    time.sleep(0.5)  # let late console messages arrive
    browser.send("Runtime.evaluate", {"expression": "1"}, session=session)
    problems = []
    for e in browser.events:
        p = e.get("params", {})
        if e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            problems.append("console error: " + " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
        elif e["method"] == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            problems.append("uncaught exception: %s %s" % (d.get("text"), d.get("exception", {}).get("description", "")))
        elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            problems.append("browser log error: " + p["entry"].get("text", ""))
        elif e["method"] == "Network.requestWillBeSent":
            url = p.get("request", {}).get("url", "")
            if not url.startswith(("file:", "data:", "about:", "blob:")):
                problems.append("network request (the report must be offline): " + url)
    if not result or not result["ready"]:
        problems.append("the page never finished rendering (window.strataReady)")
    else:
        if not result["charts"]:
            problems.append("no chart on the page")
        for c in result["charts"]:
            if c["series"] == 0 or c["points"] == 0:
                problems.append("chart %s has no data (%d series, %d points)" % (c["name"], c["series"], c["points"]))
            if c["painted"] == 0:
                problems.append("chart %s painted nothing" % c["name"])
        if not result["numbers"]:
            problems.append("no number on the page is tagged with its report key")
        for n in result["numbers"]:
            expected = expected_of(n)
            if expected is KeyError:
                problems.append("shown %s = %r is not in the JSON report" % (n["key"], n["text"]))
                continue
            shown = parse_shown(n["text"])
            if not same(shown, expected, n["text"]):
                where = " (point %s)" % n["point"] if n["point"] else " (%s)" % n["side"] if n["side"] else ""
                problems.append("%s%s shows %r but the JSON report has %r" % (n["key"], where, n["text"], expected))
    metrics = browser.send("Page.getLayoutMetrics", session=session)
    height = int(min(metrics["cssContentSize"]["height"], 7000))
    browser.send("Emulation.setDeviceMetricsOverride",
                 {"width": 1400, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)
    time.sleep(0.5)
    shot = browser.send("Page.captureScreenshot", {"format": "png"}, session=session)
    with open(screenshot, "wb") as f:
        f.write(base64.b64decode(shot["data"]))
    browser.send("Target.closeTarget", {"targetId": target})
    if problems:
        for p in problems[:40]:
            print("  " + p, file=sys.stderr)
        fail("%s: %d problem(s)" % (html, len(problems)))
    print("ok: %s (%d charts, %d numbers checked) -> %s" % (html, len(result["charts"]), len(result["numbers"]), screenshot))


def run(cmd):
    print("$ " + " ".join(cmd))
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode not in (0, 3):
        print(done.stdout)
        fail("%s exited %d" % (cmd[0], done.returncode))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strata", required=True)
    ap.add_argument("--source", required=True, help="the repository (for tests/data/html_sweep.json)")
    ap.add_argument("--work", required=True, help="folder for the reports and screenshots")
    a = ap.parse_args()
    chromium = find_chromium()
    if not chromium:
        if os.environ.get("CI") == "true":
            fail("chromium is not installed (tools/install-deps installs it)")
        print("SKIP: chromium is not installed (tools/install-deps installs it)")
        sys.exit(SKIP)
    os.makedirs(a.work, exist_ok=True)
    w = lambda name: os.path.join(a.work, name)
    # The reports: the default scenario (64 GPUs), a variant of it to compare, a small sweep.
    run([a.strata, "run", "default", "-q", "--json", w("run.json"), "--html", w("run.html")])
    run([a.strata, "run", "default", "-q", "--set", "parallelism.pp=4", "--set", "parallelism.virtual_stages=6",
         "--set", "gpus=32", "--json", w("run-b.json")])
    run([a.strata, "compare", w("run.json"), w("run-b.json"), "--html", w("compare.html")])
    sweep_out = w("sweep")
    shutil.rmtree(sweep_out, ignore_errors=True)
    run([a.strata, "sweep", os.path.join(a.source, "tests", "data", "html_sweep.json"), "--out", sweep_out, "-q",
         "--executor", "list", "--html", w("sweep.html")])

    report = json.load(open(w("run.json")))
    reports = {"a": flatten(report), "b": flatten(json.load(open(w("run-b.json"))))}
    rows = {}
    with open(os.path.join(sweep_out, "results.jsonl")) as f:
        for line in f:
            row = json.loads(line)
            rows[str(row["point"])] = row.get("report", {})

    def sweep_value(n):
        r = rows.get(n["point"])
        if r is None:
            return KeyError
        return r.get(n["key"])  # a row without the key shows '-'

    profile = tempfile.mkdtemp(prefix="strata-chromium-")
    browser = Browser(chromium, profile)
    try:
        browser.send("Target.setDiscoverTargets", {"discover": False})
        check_page(browser, w("run.html"), lambda n: lookup(report, n["key"]), w("screenshot-run.png"))
        check_page(browser, w("sweep.html"), sweep_value, w("screenshot-sweep.png"))
        check_page(browser, w("compare.html"), lambda n: reports[n["side"]].get(n["key"]), w("screenshot-compare.png"))
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
