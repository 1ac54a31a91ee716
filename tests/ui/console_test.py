#!/usr/bin/env python3
"""The console in a real browser: headless Chromium driven by Selenium.

Usage: console_test.py KSCHED PLUGIN_DIR SWAPSCORE_V1 SWAPSCORE_V2 SHOTS

Without a token, on an embedded `serve` with six nodes, five pods bound
and `big` unschedulable:
- the Cluster view has a tile per node, grouped by a label;
- the Queue view shows big with its FitError and NodeResourcesFit;
- its Explain button opens the Pod view: the attempts, and a table of
  every node, each rejected by NodeResourcesFit (the tainted one by
  TaintToleration); sorting by a column reorders it; explaining a bound
  pod marks the chosen node;
- after SwapScore 2.0.0 is renamed over 1.0.0 and POST /-/reload, the
  Plugins view shows the new generation, the version and what changed;
- the Shadow view says shadow mode is off; the Rates view draws charts.
With --token-file and 5,000 nodes: the page asks for the token, then
renders the 5,000 tiles and filters them without a long task (the
Long Tasks API); the hot swap shows there too.

A screenshot of each view is saved in SHOTS. Exits 77 (skipped) when
chromium, chromedriver or Selenium is absent.
"""
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import ksched_test as kt  # noqa: E402
from ksched_test import check  # noqa: E402
from console_util import Console, TOKEN  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
BIG_NODES = 5000

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError as e:
    webdriver = None
    SELENIUM_ERROR = str(e)

# Long tasks (over 50 ms) of the main thread, recorded from the start of
# every page (the Long Tasks API).
LONGTASKS = """
window.__longest = 0; window.__longtasks = 0;
try {
  new PerformanceObserver(function (l) {
    for (const e of l.getEntries()) {
      window.__longtasks++;
      if (e.duration > window.__longest) window.__longest = e.duration;
    }
  }).observe({type: 'longtask', buffered: true});
} catch (e) {}
"""


def browser():
    o = webdriver.ChromeOptions()
    o.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu",
              "--disable-dev-shm-usage", "--window-size=1400,1000",
              "--no-first-run", "--disable-extensions"):
        o.add_argument(a)
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=o)
    d.set_page_load_timeout(60)
    d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                      {"source": LONGTASKS})
    return d


def wait(d, what, fn, timeout=30):
    try:
        return WebDriverWait(d, timeout, 0.1).until(lambda _: fn())
    except Exception:  # noqa: BLE001 (TimeoutException and stale elements)
        check(False, "timed out waiting for " + what)
        return None


def css(d, sel):
    return d.find_elements(By.CSS_SELECTOR, sel)


def shot(d, shots, name):
    path = os.path.join(shots, name + ".png")
    d.save_screenshot(path)
    print("screenshot " + path)


def texts(els):
    return [e.text for e in els]


def plugins_view(d, c, v2, shots, tag):
    d.get(c.base + "/ui/#plugins")
    wait(d, "SwapScore 1.0.0 listed", lambda: [
        r for r in css(d, "#plugins-table tr[data-plugin=SwapScore] "
                          "td.version") if r.text == "1.0.0"])
    c.install(v2)
    gen = c.reload()
    d.find_element(By.ID, "plugins-refresh").click()
    # (the folder's watch may reload once more after the POST)

    def shown():
        m = re.match(r"generation (\d+)",
                     d.find_element(By.ID, "plugins-summary").text)
        return m and int(m.group(1)) >= gen

    ok = wait(d, "generation %s shown" % gen, shown)
    check(bool(ok), "%s: the Plugins view shows generation %s or later: %s"
          % (tag, gen, d.find_element(By.ID, "plugins-summary").text))
    ver = texts(css(d, "#plugins-table tr[data-plugin=SwapScore] td.version"))
    check(ver == ["2.0.0"], "%s: SwapScore 2.0.0 runs: %s" % (tag, ver))
    rows = texts(css(d, "#reloads-table tbody tr"))
    check(any("SwapScore 1.0.0 → 2.0.0" in r and str(gen) in r
              for r in rows), "%s: the history says what changed: %s"
          % (tag, rows[:3]))
    check(css(d, "#plugins-profiles table") and "Filter" in d.find_element(
        By.ID, "plugins-profiles").text, "%s: the profile's extension points"
          % tag)
    shot(d, shots, tag + "-plugins")


def plain_run(d, ksched, plugin_dir, v1, v2, shots):
    c = Console(ksched, plugin_dir, v1)
    try:
        c.populate(6)
        # Cluster
        d.get(c.base + "/ui/")
        wait(d, "6 tiles", lambda: len(css(d, ".tile")) == 6)
        names = sorted(e.get_attribute("data-node") for e in css(d, ".tile"))
        check(names == ["node-%d" % i for i in range(6)],
              "the Cluster view has a tile per node: %s" % names)
        Select(d.find_element(By.ID, "cluster-group")).select_by_value(
            "pool")
        wait(d, "3 groups", lambda: len(css(d, ".group h4")) == 3)
        check(texts(css(d, ".group h4")) ==
              ["pool-0 (2)", "pool-1 (2)", "pool-2 (2)"],
              "grouped by label pool: %s" % texts(css(d, ".group h4")))
        taint = texts(css(d, ".tile[data-node=node-5] .taint"))
        check(taint == ["dedicated=gpu:NoSchedule"], "a taint: %s" % taint)
        shot(d, shots, "cluster")
        d.find_element(By.ID, "cluster-filter").send_keys("zone-a")
        wait(d, "3 tiles in zone-a", lambda: len(css(d, ".tile")) == 3)
        # Queue
        d.get(c.base + "/ui/#queue")
        row = wait(d, "big in the queue", lambda: css(
            d, "#queue-table tr[data-pod='default/big']"))
        if row:
            fe = row[0].find_element(By.CSS_SELECTOR, ".fiterror").text
            check("0/6 nodes are available" in fe and "Insufficient cpu" in fe,
                  "the queue shows big's FitError: %s" % fe)
            check("NodeResourcesFit" in row[0].text and "Node/Add" in
                  row[0].text, "...the rejecting plugin and the events that "
                  "would move it")
            shot(d, shots, "queue")
            row[0].find_element(By.TAG_NAME, "button").click()
        # Pod + Explain
        wait(d, "explain rows", lambda: len(css(
            d, "#explain-table tbody tr")) == 6, 60)
        heads = texts(css(d, "#explain-table thead th"))
        col = heads.index("Rejected by") if "Rejected by" in heads else -1
        rej = {r.get_attribute("data-node"):
               r.find_elements(By.TAG_NAME, "td")[col].text
               for r in css(d, "#explain-table tbody tr")}
        want = {"node-%d" % i: "NodeResourcesFit" for i in range(5)}
        want["node-5"] = "TaintToleration"
        check(rej == want, "Explain names the rejecting plugin per node: %s"
              % rej)
        fit = heads.index("NodeResourcesFit") if "NodeResourcesFit" in \
            heads else -1
        cells = [r.find_elements(By.TAG_NAME, "td")[fit].text
                 for r in css(d, "#explain-table tbody tr")
                 if r.get_attribute("data-node") != "node-5"]
        check(all(t.startswith("✗ Insufficient cpu") for t in cells),
              "...in the NodeResourcesFit column: %s" % cells[:2])
        att = texts(css(d, "#attempts-table tbody tr"))
        check(att and "unschedulable" in att[0], "big's attempts: %s" % att)
        shot(d, shots, "pod-unschedulable")
        # a bound pod: the chosen node, sorting
        d.get(c.base + "/ui/#pod/default/web-2/explain")
        wait(d, "chosen row", lambda: css(d, "#explain-table tr.chosen"))
        chosen = css(d, "#explain-table tr.chosen")
        check(len(chosen) == 1, "the chosen node is marked")
        th = [h for h in css(d, "#explain-table thead th")
              if h.text == "Node"]
        if th:
            th[0].click()
            th = [h for h in css(d, "#explain-table thead th")
                  if h.text == "Node"]
            th[0].click()  # descending
            order = [r.get_attribute("data-node")
                     for r in css(d, "#explain-table tbody tr")]
            check(order == ["node-%d" % i for i in range(5, -1, -1)],
                  "sorted by node, descending: %s" % order)
        att = texts(css(d, "#attempts-table tbody tr"))
        check(att and "bound" in att[0], "web-2's attempt bound it: %s" % att)
        why = texts(css(d, "#pod-info p.why"))
        check(why and "chose node-" in why[0] and "NodeResourcesFit" in
              why[0], "the Pod view says why web-2 went to its node: %s"
              % why)
        shot(d, shots, "pod-bound")
        # Plugins after a hot swap
        plugins_view(d, c, v2, shots, "plain")
        # Shadow
        d.get(c.base + "/ui/#shadow")
        wait(d, "shadow text", lambda: "not running" in d.find_element(
            By.ID, "shadow-body").text)
        shot(d, shots, "shadow")
        # Rates
        time.sleep(3)
        d.get(c.base + "/ui/#rates")
        wait(d, "charts", lambda: len(css(d, "#rates-charts svg polyline"))
             >= 6)
        check(len(css(d, "#rates-charts .chart")) == 3,
              "three charts: pods per second, latency, queue sizes")
        shot(d, shots, "rates")
        # (the Shadow view's 404 is its answer outside shadow mode)
        logs = [e for e in d.get_log("browser")
                if e.get("level") == "SEVERE" and
                "/debug/shadow - Failed to load resource" not in
                e.get("message", "")]
        check(not logs, "no error in the browser's console: %s" % logs[:3])
    finally:
        c.close()


def token_run(d, ksched, plugin_dir, v1, v2, shots):
    c = Console(ksched, plugin_dir, v1, token=True)
    try:
        c.populate(6)
        for i in range(6, BIG_NODES):
            st = c.request("POST", "/api/v1/nodes", {
                "metadata": {"name": "node-%d" % i, "labels": {
                    "topology.kubernetes.io/zone": "zone-%d" % (i % 7)}},
                "status": {"allocatable": {"cpu": "8", "memory": "32Gi",
                                           "pods": "110"}}})[0]
            if st != 201:
                check(False, "node-%d created (%s)" % (i, st))
                return
        d.get(c.base + "/ui/")
        dlg = wait(d, "the token dialog", lambda: d.find_element(
            By.ID, "token-dialog").is_displayed())
        check(bool(dlg), "the page asks for the token")
        d.find_element(By.ID, "token-input").send_keys(TOKEN)
        d.find_element(By.ID, "token-save").click()
        t0 = time.time()
        wait(d, "%d tiles" % BIG_NODES, lambda: len(css(d, ".tile")) ==
             BIG_NODES, 120)
        took = time.time() - t0
        longest = d.execute_script("return window.__longest")
        print("5,000 tiles in %.1f s; longest task %.0f ms" % (took, longest))
        check(longest < 1500, "rendering 5,000 nodes never blocks the page "
              "long (longest task %.0f ms)" % longest)
        shot(d, shots, "token-cluster-5000")
        d.execute_script("window.__longest = 0")
        d.find_element(By.ID, "cluster-filter").send_keys("node-499")
        wait(d, "11 tiles", lambda: len(css(d, ".tile")) == 11, 30)
        longest = d.execute_script("return window.__longest")
        check(longest < 1500, "filtering 5,000 nodes never blocks the page "
              "long (longest task %.0f ms)" % longest)
        print("filter: longest task %.0f ms" % longest)
        d.find_element(By.ID, "cluster-filter").send_keys(
            Keys.CONTROL + "a", Keys.DELETE)
        Select(d.find_element(By.ID, "cluster-group")).select_by_value(
            "@zone")
        wait(d, "grouped by zone", lambda: len(css(d, ".group h4")) == 9, 60)
        check(d.execute_script(
            "return sessionStorage.getItem('ksched-token')") == TOKEN,
            "the token is kept in sessionStorage")
        d.get(c.base + "/ui/#queue")
        wait(d, "big in the queue (token)", lambda: css(
            d, "#queue-table tr[data-pod='default/big']"))
        plugins_view(d, c, v2, shots, "token")
    finally:
        c.close()


def main():
    if len(sys.argv) != 6:
        kt.fatal(__doc__)
    ksched, plugin_dir, v1, v2, shots = sys.argv[1:]
    if webdriver is None:
        kt.skip("python3-selenium is not installed (%s)" % SELENIUM_ERROR)
    for f in (CHROMIUM, CHROMEDRIVER):
        if not os.access(f, os.X_OK):
            kt.skip("%s is absent (Debian's chromium and chromium-driver)"
                    % f)
    shutil.rmtree(shots, ignore_errors=True)
    os.makedirs(shots)
    d = browser()
    try:
        if os.environ.get("KS_UI_ONLY") != "token":
            plain_run(d, ksched, plugin_dir, v1, v2, shots)
        token_run(d, ksched, plugin_dir, v1, v2, shots)
    finally:
        d.quit()
    return kt.summary()


if __name__ == "__main__":
    sys.exit(main())
