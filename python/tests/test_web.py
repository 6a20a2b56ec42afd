"""The read-only web page in headless Chromium (Debian's chromium, as root
with --no-sandbox): pages load without console errors, search returns the
right skill, a hostile skill's text stays text, screenshots are taken
(build/screenshots/)."""

import os
import shutil
import subprocess

import pytest

import skilldb
from conftest import BUILD, SKILLS, make_skill, report_dict

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def chromium(*args):
    if CHROMIUM is None:
        if os.environ.get("SKILLDB_REQUIRE_CHROMIUM"):
            pytest.fail("chromium is not installed (scripts/setup.sh installs it)")
        pytest.skip("chromium is not installed (scripts/setup.sh installs it)")
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-dev-shm-usage", "--no-first-run", "--enable-logging=stderr",
           "--v=0", "--virtual-time-budget=3000", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return out


def console_errors(stderr):
    """Lines Chromium logs for page console messages and failed loads."""
    return [line for line in stderr.splitlines()
            if "CONSOLE" in line or "Uncaught" in line or "Refused to" in line
            or "Failed to load resource" in line]


@pytest.fixture(scope="module")
def page_server(tmp_path_factory):
    from conftest import Served

    path = str(tmp_path_factory.mktemp("web") / "lib")
    with skilldb.open(path, create=True, sync_commits=False) as lib:
        lib.put_many([make_skill(*s) for s in SKILLS], message="three skills")
        lib.propose(make_skill("smem-tiling", "Shared memory tiling",
                               "Tile the K loop through shared memory, now with "
                               "double buffering.\nSecond line."),
                    report=report_dict(speedup=1.8), dedup="merge")
        lib.put(make_skill("hostile", "<script>alert('x')</script> tiling trap",
                           "<img src=x onerror=alert(1)> body"))
        lib.propose(make_skill("slow-one", "Slow one", "Words of the slow one."),
                    report=report_dict(speedup=1.0))
    server = Served(path, "--verifier", "none")
    yield server
    server.stop()


def test_search_page_finds_the_skill_with_no_console_error(page_server):
    shots = BUILD / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    url = page_server.url + "/ui?q=shared+memory+tiling"
    dom = chromium("--dump-dom", url)
    assert dom.returncode == 0, dom.stderr
    first = dom.stdout.index('class="hit"')
    assert 'data-id="smem-tiling"' in dom.stdout[first:first + 200]
    assert "<mark>tiling</mark>" in dom.stdout.lower()
    assert "<script>alert" not in dom.stdout
    assert "&lt;script&gt;alert" in dom.stdout
    assert console_errors(dom.stderr) == []
    shot = chromium(f"--screenshot={shots / 'search.png'}", "--window-size=1200,900", url)
    assert shot.returncode == 0, shot.stderr
    assert (shots / "search.png").stat().st_size > 5000


@pytest.mark.parametrize("path,name,expect", [
    ("/ui/skills/smem-tiling", "skill.png", "speedup intervals"),
    ("/ui/skills/hostile", "hostile.png", "&lt;img src=x"),
    ("/ui/log", "log.png", "three skills"),
    ("/ui/audit", "audit.png", "slow-one"),
])
def test_pages_load_escaped_and_are_screenshot(page_server, path, name, expect):
    shots = BUILD / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    dom = chromium("--dump-dom", page_server.url + path)
    assert dom.returncode == 0, dom.stderr
    assert expect in dom.stdout
    assert "<script" not in dom.stdout.split("</title>", 1)[1]
    assert console_errors(dom.stderr) == []
    shot = chromium(f"--screenshot={shots / name}", "--window-size=1200,1400",
                    page_server.url + path)
    assert shot.returncode == 0, shot.stderr
    assert (shots / name).stat().st_size > 5000
