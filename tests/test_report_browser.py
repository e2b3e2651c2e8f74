"""latitude report and sweep --report, opened in a real browser: Debian's chromium driven by
Selenium through chromedriver, headless, with no network. The tests check what the browser
rendered (sections, figures with a size, table rows, the command) and that the page loaded
nothing, and take a screenshot (kept in LATITUDE_SCREENSHOTS when that is set)."""

from __future__ import annotations

import os
import shutil

import latitude
import pytest

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason="chromium and chromium-driver not installed")


@pytest.fixture
def browser(tmp_path):
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        "--window-size=1280,2400",
    ):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def screenshot(driver, tmp_path, name: str) -> str:
    path = str(tmp_path / name)
    assert driver.save_screenshot(path)
    assert os.path.getsize(path) > 10_000  # a rendered page, not a blank image
    keep = os.environ.get("LATITUDE_SCREENSHOTS")
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copy(path, os.path.join(keep, name))
    return path


def loaded_nothing(driver) -> bool:
    """The page fetched no resource (everything inline)."""
    return driver.execute_script("return performance.getEntriesByType('resource').length") == 0


def test_report_renders_in_chromium(browser, tmp_path, examples, cli):
    out = tmp_path / "report.html"
    goal = os.path.join(examples, "halo2d-16.goal")
    cli("report", goal, "-o", out, "-L", "3us", "--overhead", "1us", "--map", "L=0:20us,G=0:0.1ns", "--resolution", "8")
    html = out.read_text()
    assert "<script" not in html and " src=" not in html and "<link" not in html
    browser.get(out.as_uri())
    assert browser.title == "Latitude report: halo2d-16.goal"
    ids = [s.get_attribute("id") for s in browser.find_elements(By.TAG_NAME, "section")]
    assert ids == ["prediction", "critical-path", "tolerance", "sensitivity", "ranks", "map", "decomposition", "inputs"]
    assert browser.find_element(By.ID, "runtime").text.startswith("T = ")
    figures = browser.find_elements(By.CSS_SELECTOR, "figure.plot svg")
    assert len(figures) == 4  # runtime curve with zones, λ_L/ρ_L, the L × G map, the decomposition
    for svg in figures:
        assert svg.size["width"] > 300 and svg.size["height"] > 200 and svg.is_displayed()
    tol_rows = browser.find_elements(By.CSS_SELECTOR, "#tolerance table tr")
    assert [r.find_elements(By.TAG_NAME, "td")[0].text for r in tol_rows[1:]] == ["1 %", "2 %", "5 %"]
    pred = latitude.load(goal, progress=False).predict(L="3us", o="1us")
    on_path = [r for r in pred.per_rank_rows() if r["calc_ns"] + r["overhead_ns"] + r["network_ns"] + r["gap_ns"] > 0]
    rank_rows = browser.find_elements(By.CSS_SELECTOR, "#ranks table tr")
    assert len(rank_rows) == 1 + len(on_path) and len(on_path) > 1
    assert f"{len(on_path)} of 16 ranks" in browser.find_element(By.ID, "ranks").text
    cmd = browser.find_element(By.ID, "command").text
    assert cmd.startswith("latitude report ") and "--map L=0:20us,G=0:0.1ns" in cmd
    assert loaded_nothing(browser)
    screenshot(browser, tmp_path, "report.png")


def test_topology_comparison_renders_in_chromium(browser, tmp_path, examples, cli):
    out = tmp_path / "compare.html"
    goal = os.path.join(examples, "halo2d-16.goal")
    ft, df = (os.path.join(examples, "machines", f) for f in ("fat-tree-k16.toml", "dragonfly-g8.toml"))
    cli("report", goal, "-o", out, "--machine", ft, "--compare", ft, "--compare", df, "--pct", "1,5")
    browser.get(out.as_uri())
    ids = [s.get_attribute("id") for s in browser.find_elements(By.TAG_NAME, "section")]
    assert ids == [
        "prediction",
        "critical-path",
        "tolerance",
        "sensitivity",
        "ranks",
        "comparison",
        "decomposition",
        "inputs",
    ]
    rows = browser.find_elements(By.CSS_SELECTOR, "#comparison table tr")
    assert [r.find_elements(By.TAG_NAME, "td")[0].text for r in rows[1:]] == ["fat-tree-k16", "dragonfly-g8"]
    assert [h.text for h in rows[0].find_elements(By.TAG_NAME, "th")][-2:] == [
        "largest wire at 1 %",
        "largest wire at 5 %",
    ]
    svg = browser.find_element(By.CSS_SELECTOR, "#comparison figure.plot svg")
    assert svg.size["width"] > 600 and svg.is_displayed()
    assert loaded_nothing(browser)
    screenshot(browser, tmp_path, "compare-report.png")


def test_sweep_report_renders_in_chromium(browser, tmp_path, examples, cli):
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f'input = ["{examples}/halo2d-16.goal", "{examples}/stencil-and-io.job"]\n'
        '[params]\nL = "1us:10us:4"\nG = ["0.018ns", "0.05ns"]\nS = ["64KiB", "inf"]\n'
    )
    out = tmp_path / "sweep.html"
    cli("sweep", spec, "-o", tmp_path / "r.parquet", "--report", out)
    browser.get(out.as_uri())
    ids = [s.get_attribute("id") for s in browser.find_elements(By.TAG_NAME, "section")]
    assert ids[:3] == ["summary", "best", "heatmaps"] and "inputs" in ids
    summary = browser.find_element(By.ID, "summary").text
    assert "32 points" in summary
    best = browser.find_elements(By.CSS_SELECTOR, "#best table")[0].find_elements(By.TAG_NAME, "tr")
    assert len(best) > 2
    # One heat map per pair of swept dimensions: input, L, G, S -> 6 pairs.
    maps = browser.find_elements(By.CSS_SELECTOR, "#heatmaps figure.plot svg")
    assert len(maps) == 6 and all(m.size["width"] > 200 for m in maps)
    assert loaded_nothing(browser)
    screenshot(browser, tmp_path, "sweep-report.png")
