#!/usr/bin/env python3
"""Fault isolation in the console: a hot swap to a plugin version that
crashes in Filter, the worker replaced, the version serving before it
rolled back to (as tests/serve/rollback_test.py), then what the console
shows of it.

Usage: rollback_console_test.py KSCHED PLUGIN_DIR FAULTY_DIR PROFILE SHOTS

- /debug/plugins: Faulty 1.0.0 runs, rolledBack (loaded from the
  supervisor's kept copy); the fault of 2.0.0-filter-segv in Filter; the
  reload to generation 2 in the history.
- in headless Chromium, the Plugins view says "rolled back" beside
  Faulty and lists the fault.
Exits 77 without chromium, chromedriver or Selenium.
"""
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "serve"))
import ksched_test as kt  # noqa: E402
from ksched_test import check  # noqa: E402
import rollback_test as rb  # noqa: E402
import console_test as ui  # noqa: E402


def main():
    if len(sys.argv) != 6:
        kt.fatal(__doc__)
    ksched, plugin_dir, faulty_dir, profile, shots = sys.argv[1:]
    if ui.webdriver is None:
        kt.skip("python3-selenium is not installed")
    for f in (ui.CHROMIUM, ui.CHROMEDRIVER):
        if not os.access(f, os.X_OK):
            kt.skip("%s is absent (Debian's chromium and chromium-driver)"
                    % f)
    tmp = tempfile.mkdtemp(prefix="ksched-ui-rollback-")
    pd = os.path.join(tmp, "plugins")
    os.mkdir(pd)
    rb.install(faulty_dir, "ok", pd)
    srv = rb.start(ksched, plugin_dir, profile, pd)
    drv = None
    try:
        rb.all_bound(srv, rb.post_pods(srv, "before", 6), "with 1.0.0")
        old = srv.worker_pid()
        st, body = rb.swap(srv, faulty_dir, "filter_segv", pd)
        check(st == 200, "the reload to 2.0.0-filter-segv (%s %s)"
              % (st, body))
        after = rb.post_pods(srv, "after", 4)
        ready = kt.wait_for("a new worker", lambda: srv.worker_pid() != old
                            and rb.request(srv, "GET", "/readyz")[0] == 200,
                            60)
        check(bool(ready), "a new worker serves after the crash")
        rb.all_bound(srv, after, "after the rollback")
        doc = rb.debug_plugins(srv)
        fa = [p for p in doc.get("plugins", []) if p["name"] == "Faulty"]
        check(fa and fa[0]["version"] == "1.0.0" and fa[0]["rolledBack"],
              "/debug/plugins: Faulty 1.0.0 runs, rolled back (%s)" % fa)
        faults = doc.get("faults", {}).get("faults", [])
        check(any(f["plugin"] == "Faulty" and
                  f["version"] == "2.0.0-filter-segv" and
                  f["extensionPoint"] == "Filter" for f in faults),
              "/debug/plugins: the fault of 2.0.0-filter-segv in Filter")
        os.makedirs(shots, exist_ok=True)
        drv = ui.browser()
        drv.get("%s/ui/#plugins" % srv.addr)
        row = ui.wait(drv, "Faulty in the Plugins view", lambda: ui.css(
            drv, "#plugins-table tr[data-plugin=Faulty]"))
        check(bool(row) and "rolled back" in row[0].text,
              "the Plugins view says Faulty was rolled back: %s"
              % (row[0].text if row else None))
        text = drv.find_element(ui.By.ID, "plugins-faults").text
        check("2.0.0-filter-segv" in text and "Filter" in text,
              "the Plugins view lists the fault")
        ui.shot(drv, shots, "plugins-rollback")
    finally:
        if drv is not None:
            drv.quit()
        rc = srv.stop()
        check(rc == 0, "serve exits 0 (%s)" % rc)
        if kt.failures:
            print("\n".join(srv.lines[-40:]))
        shutil.rmtree(tmp, ignore_errors=True)
    return kt.summary()


if __name__ == "__main__":
    sys.exit(main())
