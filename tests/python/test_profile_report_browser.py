"""The HTML profile pages (`pypto profile html`, `pypto profile diff --html`) driven in a real
browser: Debian's headless Chromium through Selenium and Debian's chromedriver, both listed in
scripts/deps-apt.txt. The pages are files opened as file:// URLs, so no server is needed.

Checked as a user would see it: the report of examples/ffn.py loads without console errors and
fetches nothing, a click on a stage zooms the timeline to it, the wheel zooms, reset shows the
whole run, a search marks the matching stages in the timeline, the tree and the list, a tree
node collapses, the device lanes show the run's tasks and their dependency edges; the diff page
lists the stages by the size of their change; names made of HTML and script show as text and
run nothing. Screenshots are written under pytest's tmp folder (their paths are printed)."""

import json
import os
import pathlib
import shutil

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from cli_tool import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
HOSTILE = ["<!--<script>alert(1)</script>", "</script><b>x</b>",
           "<img src=x onerror=alert(2)>", "line\u2028sep\u2029end"]

# Set before any page script runs: a name that became markup and ran would call these.
RECORD_ALERTS = """
window.__alerts = [];
window.alert = window.confirm = window.prompt = function (m) { window.__alerts.push(String(m)); };
"""


def browser_paths():
    chromium = next((shutil.which(n) for n in ["chromium", "chromium-browser"] if shutil.which(n)),
                    None)
    driver = shutil.which("chromedriver") or (
        "/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)
    if not chromium or not driver:
        pytest.fail("headless Chromium and chromedriver are needed (Debian packages `chromium` "
                    "and `chromium-driver`, in scripts/deps-apt.txt)")
    return chromium, driver


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium, driver = browser_paths()
    # Selenium must not look for a driver or browser of its own on the network.
    offline_before = os.environ.get("SE_OFFLINE")
    os.environ["SE_OFFLINE"] = "true"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--window-size=1400,1000",
                f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"]:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chrome = webdriver.Chrome(options=options, service=Service(driver))
    chrome.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_ALERTS})
    yield chrome
    chrome.quit()
    if offline_before is None:
        del os.environ["SE_OFFLINE"]
    else:
        os.environ["SE_OFFLINE"] = offline_before


def open_page(browser, page, kind):
    browser.get_log("browser")  # drop what earlier pages logged
    browser.get(page.as_uri())
    WebDriverWait(browser, 20).until(
        lambda b: b.execute_script("return document.body.getAttribute('data-ready')") == kind
        or b.execute_script("return document.body.getAttribute('data-error')"))
    assert browser.execute_script("return document.body.getAttribute('data-error')") is None
    problems = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert not problems, problems
    # Self-contained: the page loaded no script, style, image or font.
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    assert browser.execute_script("return window.__alerts") == []


def screenshot(browser, tmp_path, name):
    shot = tmp_path / name
    browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10000
    print(f"screenshot: {shot}")


def view(browser):
    frame = browser.find_element(By.CSS_SELECTOR, "svg.frame")
    return (float(frame.get_attribute("data-view-start")),
            float(frame.get_attribute("data-view-end")))


def wait_for(browser, condition, what):
    WebDriverWait(browser, 10).until(lambda b: condition(), message=what)


def walk(stages, depth=0):
    for stage in stages:
        yield stage, depth
        yield from walk(stage["children"], depth + 1)


@pytest.fixture(scope="module")
def ffn_run(tmp_path_factory):
    """examples/ffn.py compiled and run by the tool with --profile: its profile (path, dict),
    which holds the device timeline of the run, and the HTML report of it."""
    out = tmp_path_factory.mktemp("ffn-run") / "out"
    proc = cli("run", EXAMPLES / "ffn.py", "--profile", "--rtol", "1e-3", "--atol", "1e-3",
               "-o", out, cwd=out.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    path = out / "report" / "pipeline_profile.json"
    page = out.parent / "report.html"
    html = cli("profile", "html", path, "-o", page, cwd=out.parent)
    assert html.returncode == 0 and f"wrote {page}" in html.stdout, html.stderr
    print(f"report of examples/ffn.py: {page.stat().st_size} bytes")
    return path, json.loads(path.read_text()), page


def paths(stages, prefix=""):
    out = set()
    for stage in stages:
        path = f"{prefix};{stage['name']}" if prefix else stage["name"]
        out |= {path} | paths(stage["children"], path)
    return out


def device_of(profile):
    return next(s["device"] for s, _ in walk(profile["stages"]) if "device" in s)


def test_report_of_ffn_loads_offline_and_shows_every_part(browser, ffn_run, tmp_path):
    path, profile, page = ffn_run
    text = page.read_text()
    assert "<script src" not in text and "<link" not in text
    open_page(browser, page, "report")
    for part in ["svg.overview", "svg.frame", "#tree", "#list", "#device", "#search"]:
        assert browser.find_elements(By.CSS_SELECTOR, part), part
    # The tree has a row for every stage name of the profile (repeated ones merged).
    rows = browser.find_elements(By.CSS_SELECTOR, "#tree tbody tr")
    names = {s["name"] for s, _ in walk(profile["stages"])}
    assert {r.get_attribute("data-name") for r in rows} == names
    assert len(rows) < sum(1 for _ in walk(profile["stages"]))  # verify (9×) and the like
    screenshot(browser, tmp_path, "report_ffn.png")


def test_click_on_a_stage_zooms_to_it_and_reset_shows_everything(browser, ffn_run, tmp_path):
    path, profile, page = ffn_run
    open_page(browser, page, "report")
    start, end = view(browser)
    execute = next(s for s, _ in walk(profile["stages"]) if s["name"] == "execute")
    browser.find_element(By.CSS_SELECTOR, 'g.item[data-name="execute"] rect').click()
    wait_for(browser, lambda: view(browser)[1] - view(browser)[0] < (end - start) * 0.9,
             "the view did not shrink after a click on `execute`")
    WebDriverWait(browser, 30).until(lambda b: b.execute_script(
        "return !document.querySelector('svg.frame').__transition"), "zoom animation")
    zoomed = view(browser)
    origin = min(s["start"] for s in profile["stages"])
    # The stage fills the view, with a small margin either side.
    assert zoomed[0] <= execute["start"] - origin + 1e-7
    assert zoomed[1] >= execute["start"] + execute["seconds"] - origin - 1e-7
    assert zoomed[1] - zoomed[0] < execute["seconds"] * 1.2
    assert "(\u00d7" in browser.find_element(By.ID, "view-range").text
    screenshot(browser, tmp_path, "report_zoomed.png")

    browser.find_element(By.ID, "reset-zoom").click()
    wait_for(browser, lambda: abs((view(browser)[1] - view(browser)[0]) - (end - start)) < 1e-9,
             "reset did not show the whole run")
    # The wheel zooms in around the pointer.
    frame = browser.find_element(By.CSS_SELECTOR, "svg.frame")
    ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(frame), 0, -300).perform()
    wait_for(browser, lambda: view(browser)[1] - view(browser)[0] < (end - start) * 0.95,
             "the wheel did not zoom in")


def test_search_marks_matching_stages_in_timeline_tree_and_list(browser, ffn_run, tmp_path):
    path, profile, page = ffn_run
    open_page(browser, page, "report")
    box = browser.find_element(By.ID, "search")
    box.send_keys("verify")
    count = browser.find_element(By.ID, "match-count")
    wait_for(browser, lambda: "match" in count.text, "no match count")
    verify = [s for s, _ in walk(profile["stages"]) if "verify" in s["name"].lower()]
    assert count.text.startswith(f"{len(verify)} stage"), count.text
    marked = browser.find_elements(By.CSS_SELECTOR, "g.item.match")
    assert marked and all("verify" in m.get_attribute("data-name") for m in marked)
    # Matches are drawn even where they are thinner than a pixel, so a search finds them.
    assert len(marked) == len(verify)
    rows = browser.find_elements(By.CSS_SELECTOR, "#tree tr.match")
    assert [r.get_attribute("data-name") for r in rows] == ["verify"]
    assert browser.find_elements(By.CSS_SELECTOR, "#list tr.match")
    screenshot(browser, tmp_path, "report_search.png")
    box.clear()
    box.send_keys(Keys.ESCAPE)  # clears the search
    wait_for(browser, lambda: not browser.find_elements(By.CSS_SELECTOR, "g.item.match"),
             "clearing the search kept the marks")


def test_a_tree_node_collapses_and_repeated_stages_are_merged(browser, ffn_run):
    path, profile, page = ffn_run
    open_page(browser, page, "report")

    def shown():
        return [r.get_attribute("data-name")
                for r in browser.find_elements(By.CSS_SELECTOR, "#tree tbody tr")]

    assert "passes" in shown() and "verify" in shown()
    toggle = browser.find_element(By.CSS_SELECTOR, '#tree tr[data-name="passes"] .toggle')
    assert toggle.get_attribute("aria-expanded") == "true"
    before = len(shown())
    toggle.click()
    toggle = browser.find_element(By.CSS_SELECTOR, '#tree tr[data-name="passes"] .toggle')
    assert toggle.get_attribute("aria-expanded") == "false"
    assert "verify" not in shown() and len(shown()) < before
    toggle.click()
    assert "verify" in shown()

    # As the text summary folds them: one row with the count, the summed time and the spread.
    passes = next(s for s, _ in walk(profile["stages"]) if s["name"] == "passes")
    verify = [c for c in passes["children"] if c["name"] == "verify"]
    row = browser.find_element(By.CSS_SELECTOR, '#tree tr[data-name="verify"]')
    cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
    assert cells[1] == f"{len(verify)}\u00d7", cells
    assert cells[5].count("\u00b7") == 2, cells  # min · median · max
    summary = cli("profile", "show", path, cwd=path.parent)
    assert f"verify ({len(verify)}\u00d7)" in summary.stdout


def test_device_lanes_show_the_runs_tasks_and_dependencies(browser, ffn_run, tmp_path):
    path, profile, page = ffn_run
    device = device_of(profile)
    ran = [t for t in device["tasks"] if t[1] >= 0]
    open_page(browser, page, "report")
    labels = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "svg.frame text.lane-label")]
    assert "device \u00b7 core 0" in labels and f"core {device['cores'] - 1}" in labels
    # Zoomed to the stage that ran them, every task is drawn on its core's row, named.
    browser.find_element(By.CSS_SELECTOR, 'g.item[data-name="run"] rect').click()
    WebDriverWait(browser, 30).until(lambda b: len(b.find_elements(
        By.CSS_SELECTOR, "g.item.task")) == len(ran) and not b.execute_script(
        "return document.querySelector('svg.frame').__transition"), "tasks not drawn")
    tasks = browser.find_elements(By.CSS_SELECTOR, "g.item.task")
    assert sorted(t.get_attribute("data-name") for t in tasks) == sorted(t[0] for t in ran)
    assert any(t.find_element(By.TAG_NAME, "text").text for t in tasks)  # a label fits
    waited = [t for t in ran if t[4] >= 0]
    assert len(browser.find_elements(By.CSS_SELECTOR, "path.edge")) == len(waited) > 0
    ActionChains(browser).move_to_element(tasks[-1].find_element(By.TAG_NAME, "rect")).perform()
    tip = browser.find_element(By.ID, "tip")
    assert tip.is_displayed() and "on core" in tip.text
    screenshot(browser, tmp_path, "report_device.png")
    # The device table: one row per core of the run.
    assert len(browser.find_elements(By.CSS_SELECTOR, "#device tbody tr")) == device["cores"]


def test_diff_page_lists_stages_by_the_size_of_their_change(browser, ffn_run, tmp_path):
    path, profile, _ = ffn_run
    slow = json.loads(path.read_text())
    target = next(s for s, _ in walk(slow["stages"]) if s["name"] == "execute")
    target["seconds"] += 1.0  # a planted slowdown that outweighs any other difference
    (tmp_path / "slow.json").write_text(json.dumps(slow))
    page = tmp_path / "diff.html"
    proc = cli("profile", "diff", path, tmp_path / "slow.json", "--html", "-o", page,
               "--fail-on-regression", cwd=tmp_path)
    assert proc.returncode == 1 and f"wrote {page}" in proc.stdout, proc.stdout + proc.stderr
    usage = cli("profile", "diff", path, tmp_path / "slow.json", "--html", cwd=tmp_path)
    assert usage.returncode == 2 and "-o" in usage.stderr

    open_page(browser, page, "diff")
    rows = browser.find_elements(By.CSS_SELECTOR, "#diff tbody tr")
    assert len(rows) == len(paths(profile["stages"]))  # stages sharing a path are one row
    first = rows[0]
    assert first.get_attribute("data-path").endswith(";execute")
    cells = [c.text for c in first.find_elements(By.TAG_NAME, "td")]
    assert cells[3].startswith("+1.0") and cells[4].startswith("\u00d7") and cells[5] == "REGRESSED"
    assert "regressed" in first.get_attribute("class")
    assert browser.find_elements(By.CSS_SELECTOR, "g.change rect.delta-bar.slower")
    screenshot(browser, tmp_path, "diff.png")
    browser.find_element(By.ID, "search").send_keys("passes")
    wait_for(browser, lambda: all("passes" in r.get_attribute("data-path") for r in
                                  browser.find_elements(By.CSS_SELECTOR, "#diff tbody tr")),
             "the filter kept other stages")


def hostile_profile(tmp_path):
    stages = [{"name": name, "seconds": 0.25, "start": 10.0 + i * 0.25, "error": name,
               "failed": True, "children": []} for i, name in enumerate(HOSTILE)]
    stages[0]["device"] = {"cores": 1, "begin": 10.0, "end": 10.1,
                           "task_fields": ["kernel", "core", "start", "end", "waited_on"],
                           "tasks": [[HOSTILE[2], 0, 10.0, 10.1, -1]]}
    document = {"total_seconds": 1.0, "stages": stages,
                "threads": [{"id": 7, "name": HOSTILE[1]}], "metadata": {"program": HOSTILE[0]}}
    path = tmp_path / "<i>evil.json"
    path.write_text(json.dumps(document))
    return path


def test_names_made_of_markup_render_as_text_and_run_nothing(browser, tmp_path):
    path = hostile_profile(tmp_path)
    page = tmp_path / "evil.html"
    assert cli("profile", "html", path, "-o", page, cwd=tmp_path).returncode == 0
    open_page(browser, page, "report")
    assert browser.title == f"PyPTO compile profile: {path}"
    assert not browser.find_elements(By.TAG_NAME, "img")
    assert not browser.find_elements(By.XPATH, "//b[text()='x']")
    rows = browser.find_elements(By.CSS_SELECTOR, "#tree tbody tr")
    assert [r.get_attribute("data-name") for r in rows] == HOSTILE
    shown = [r.find_element(By.CSS_SELECTOR, ".name").get_attribute("textContent") for r in rows]
    assert shown == HOSTILE
    assert HOSTILE[0] in browser.find_element(By.ID, "summary").text
    task = browser.find_element(By.CSS_SELECTOR, "g.item.task")
    assert task.get_attribute("data-name") == HOSTILE[2]
    screenshot(browser, tmp_path, "escaping_report.png")

    other = tmp_path / "other.json"
    other.write_text(path.read_text().replace("0.25", "0.5"))
    diff = tmp_path / "evil-diff.html"
    assert cli("profile", "diff", path, other, "--html", "-o", diff, cwd=tmp_path).returncode == 0
    open_page(browser, diff, "diff")
    assert not browser.find_elements(By.TAG_NAME, "img")
    paths = [r.get_attribute("data-path")
             for r in browser.find_elements(By.CSS_SELECTOR, "#diff tbody tr")]
    assert sorted(paths) == sorted(HOSTILE)
    assert browser.execute_script("return window.__alerts") == []
    screenshot(browser, tmp_path, "escaping_diff.png")
