"""The built site (`build/site/`, `python -m tools.site build`) in headless Chromium.

Runs in `nox -s site`, after the build, which sets TPU_SITE_BROWSER=1; elsewhere (the default
`nox -s tests` leaves this folder out) it is skipped: it needs Selenium, Debian's `chromium` and
`chromium-driver`, and the built site. The site is served by `http.server` on 127.0.0.1 (the
only network this test uses). Chromium opens the landing page and one notebook page per
language, saves screenshots to `build/site-screenshots/`, and checks that each page loads with a
title, that every image renders, and that the language switcher's links lead to the same
notebook in their language. Every internal link of every HTML file of the site is checked too,
from the files, fragments included. Every wait has a bound.
"""

from __future__ import annotations

import functools
import html.parser
import os
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

if not os.environ.get("TPU_SITE_BROWSER"):
    pytest.skip(
        "the browser check runs in `nox -s site`, after the build (TPU_SITE_BROWSER=1)",
        allow_module_level=True,
    )

from selenium import webdriver  # noqa: E402 (only where the check runs)
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from tools import phrases  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "site"
SCREENSHOTS = ROOT / "build" / "site-screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1366,1000",
)
PAGE_LOAD_SECONDS = 60
WAIT_SECONDS = 30
HTTP_SECONDS = 10
OUTPUT_IMAGE_RE = re.compile(r'<img[^>]+src="(?:\.\./)?_images/[0-9a-f]{16,}\.(?:png|jpg|svg)"')
OUTPUT_IMAGE_URL_RE = re.compile(r"/_images/[0-9a-f]{16,}\.(?:png|jpg|svg)$")
EXTERNAL_RE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)

if not SITE.joinpath("index.html").is_file():
    pytest.fail(
        f"no site in {SITE}: build it first (`python -m tools.site build`, or `nox -s site`)",
        pytrace=False,
    )


def site_languages() -> list[str]:
    """The languages the landing page links, in its order (English first)."""
    landing = SITE.joinpath("index.html").read_text(encoding="utf-8")
    block = landing.split('class="tpu-language-list"', 1)[-1].split("</p>", 1)[0]
    return re.findall(r'hreflang="([^"]+)"', block)


def pages_to_open() -> list[str]:
    """The landing page and one notebook page per language, each with plots (rotating)."""
    notebooks = sorted(
        path.name
        for path in SITE.joinpath("en").glob("[0-9]*.html")
        if OUTPUT_IMAGE_RE.search(path.read_text(encoding="utf-8"))
    )
    assert notebooks, f"no notebook page with an output image in {SITE / 'en'}"
    languages = site_languages()
    return ["index.html"] + [
        f"{lang}/{notebooks[index % len(notebooks)]}" for index, lang in enumerate(languages)
    ]


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves the site without logging every request."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base's name)
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The site on 127.0.0.1, a free port; yields its base URL."""
    handler = functools.partial(QuietHandler, directory=str(SITE))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    """Headless Chromium through Debian's chromedriver (no Selenium Manager, no network)."""
    for program in (CHROMIUM, CHROMEDRIVER):
        if not program.is_file():
            pytest.fail(
                f"{program} is missing: `apt-get install -y chromium chromium-driver`",
                pytrace=False,
            )
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    driver.set_page_load_timeout(PAGE_LOAD_SECONDS)
    driver.set_script_timeout(WAIT_SECONDS)
    yield driver
    driver.quit()


def fetch(url: str) -> tuple[int, str]:
    """GETs a URL from the local server: (status, body)."""
    try:
        with urllib.request.urlopen(url, timeout=HTTP_SECONDS) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, ""


def html_lang(body: str) -> str:
    """The `lang` attribute of a page's <html> element, lowercased."""
    found = re.search(r"<html[^>]*\slang=\"([^\"]+)\"", body)
    return found.group(1).lower() if found else ""


def wait_for_images(driver: webdriver.Chrome) -> list[dict]:
    """Loads every image (lazy ones too) and returns each one's src and natural size."""
    driver.execute_script(
        "document.querySelectorAll('img[loading=lazy]').forEach(i => i.loading = 'eager');"
    )
    WebDriverWait(driver, WAIT_SECONDS).until(
        lambda d: d.execute_script("return Array.from(document.images).every(i => i.complete);"),
        message=f"images still loading after {WAIT_SECONDS} s",
    )
    return driver.execute_script(
        "return Array.from(document.images).map("
        "i => ({src: i.currentSrc || i.src, width: i.naturalWidth, height: i.naturalHeight}));"
    )


def screenshot(driver: webdriver.Chrome, page: str, suffix: str = "") -> Path:
    """Saves the viewport as build/site-screenshots/<page>.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    name = page.removesuffix(".html").replace("/", "__") + suffix
    path = SCREENSHOTS / f"{name}.png"
    assert driver.save_screenshot(str(path)), f"Chromium saved no screenshot of {page}"
    return path


# Two characters of each CJK language: drawn in the page's font, they differ unless both fall
# back to the same empty box (no font with these glyphs: the page reads as boxes).
CJK_GLYPHS = {"ja": ("あ", "い"), "ko": ("가", "나"), "zh-cn": ("中", "文")}
DRAW_GLYPHS = """
const canvas = document.createElement("canvas");
canvas.width = canvas.height = 64;
const context = canvas.getContext("2d");
const draw = (glyph) => {
  context.clearRect(0, 0, 64, 64);
  context.font = "48px " + getComputedStyle(document.body).fontFamily;
  context.fillText(glyph, 4, 52);
  return canvas.toDataURL();
};
return [draw(arguments[0]), draw(arguments[1])];
"""
# What Sphinx and its theme print where a setting is missing (sphinx's default author, project).
PLACEHOLDER_TEXT = ("Author name not set", "Project name not set")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("page", pages_to_open())
def test_the_page_loads_with_its_images_in_chromium(page, server, browser):
    url = urljoin(server, page)
    status, _ = fetch(url)
    assert status == 200, f"{url}: HTTP {status}"
    browser.get(url)
    WebDriverWait(browser, WAIT_SECONDS).until(
        lambda d: d.execute_script("return document.readyState") == "complete",
        message=f"{url} not loaded after {WAIT_SECONDS} s",
    )
    assert browser.title.strip(), f"{url} has no title"
    text = browser.find_element(By.TAG_NAME, "body").text
    placeholders = [words for words in PLACEHOLDER_TEXT if words in text]
    assert not placeholders, f"{url}: a placeholder of Sphinx or its theme: {placeholders}"
    if (glyphs := CJK_GLYPHS.get(page.split("/")[0])) is not None:
        first, second = browser.execute_script(DRAW_GLYPHS, *glyphs)
        assert first != second, (
            f"{url}: {glyphs[0]} and {glyphs[1]} render as the same box in the page's font: no "
            "font has these glyphs (`apt-get install -y fonts-noto-cjk`)"
        )
    images = wait_for_images(browser)
    broken = [image["src"] for image in images if not image["width"] > 0]
    assert images and not broken, f"{url}: images that do not render: {broken}"
    screenshot(browser, page)
    if page == "index.html":
        return
    outputs = [image for image in images if OUTPUT_IMAGE_URL_RE.search(image["src"])]
    assert outputs, f"{url}: no plot among the images {images}"
    header = browser.find_element(By.CSS_SELECTOR, "div.tpu-run").text
    # In the page's language (tools/site/sentences.toml): the parameters papermill injected
    # (`NAME = value`, as code) or the sentence for the defaults, and the run's date.
    lang = page.split("/")[0]
    defaults = phrases.site().text(lang, "parameters_none")
    assert " UTC" in header, f"{url}: header without the run's date {header!r}"
    assert " = " in header or defaults in header, f"{url}: header without parameters {header!r}"
    if not page.startswith(("en/", "index")):
        assert "Parameters (" not in header, f"{url}: the header is in English: {header!r}"
    plot = browser.find_elements(By.CSS_SELECTOR, "div.cell_output img")
    if plot:
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", plot[0])
        screenshot(browser, page, "-plot")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("page", pages_to_open()[1:])
def test_the_language_switcher_leads_to_the_same_notebook_in_each_language(page, server):
    body = SITE.joinpath(page).read_text(encoding="utf-8")
    nav = re.search(r'<nav class="tpu-languages".*?</nav>', body, re.DOTALL)
    assert nav, f"{page}: no language switcher"
    targets = re.findall(r'<a href="([^"]+)" hreflang="([^"]+)"', nav.group(0))
    languages = site_languages()
    assert sorted(lang for _, lang in targets) == sorted(set(languages) - {page.split("/")[0]})
    for href, lang in targets:
        url = urljoin(urljoin(server, page), href)
        status, target = fetch(url)
        assert status == 200, f"{page}: switcher link {href} gives HTTP {status}"
        assert html_lang(target) == lang or f"/{lang}/" in urlsplit(url).path, (
            f"{page}: {href} is not in {lang} (<html lang={html_lang(target)!r}>)"
        )
        assert Path(urlsplit(url).path).name == Path(page).name, f"{href}: another notebook"


class LinkParser(html.parser.HTMLParser):
    """Collects the ids of a page and its links (href and src attributes)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)
            elif name in ("href", "src") and value:
                self.links.append(value)


@functools.cache
def parsed(path: Path) -> LinkParser:
    """The ids and links of one HTML file."""
    parser = LinkParser()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return parser


def broken_link(page: Path, link: str) -> str | None:
    """Why an internal link of `page` does not resolve, or None (external links: None)."""
    if EXTERNAL_RE.match(link) or link == "#":
        return None
    parts = urlsplit(link)
    target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
    if target.is_dir():
        target = target / "index.html"
    if not target.is_relative_to(SITE.resolve()):
        return f"{link}: leaves the site"
    if not target.is_file():
        return f"{link}: no {target.relative_to(SITE.resolve())}"
    fragment = unquote(parts.fragment)
    if fragment and target.suffix == ".html" and fragment not in parsed(target).ids:
        return f"{link}: no id {fragment!r} in {target.relative_to(SITE.resolve())}"
    return None


@pytest.mark.timeout(300)
def test_no_internal_link_of_the_site_is_broken():
    # Pages only: the theme copies Jinja macro files (webpack-macros.html) into _static/.
    pages = sorted(p for p in SITE.rglob("*.html") if "_static" not in p.relative_to(SITE).parts)
    assert len(pages) > len(site_languages()) * 2, f"too few pages in {SITE}: {len(pages)}"
    broken = []
    for page in pages:
        for link in dict.fromkeys(parsed(page).links):
            why = broken_link(page, link)
            if why:
                broken.append(f"{page.relative_to(SITE)}: {why}")
    assert not broken, f"{len(broken)} broken internal links:\n" + "\n".join(broken[:40])


SEARCHES = {"en": "replica", "de": "Replikat", "ja": "TPU", "zh-cn": "分布式"}


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("lang", "query"), SEARCHES.items())
def test_search_finds_pages_offline(lang, query, server, browser):
    if lang not in site_languages():
        pytest.skip(f"{lang} is not in this build")
    folder = "" if lang == "en" else f"{lang}/"
    browser.get(urljoin(server, f"{folder}search.html?q={query}"))
    WebDriverWait(browser, WAIT_SECONDS).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#search-results li"),
        message=f"{lang}: no search results for {query!r} after {WAIT_SECONDS} s",
    )
    results = browser.find_elements(By.CSS_SELECTOR, "#search-results li a")
    assert any(".html" in (a.get_attribute("href") or "") for a in results)


@pytest.mark.timeout(120)
def test_the_landing_table_fits_a_1024_pixel_window(server, browser):
    # One row per notebook, its languages in two cells: no language column may hide to the right.
    browser.set_window_size(1024, 800)
    try:
        browser.get(urljoin(server, "index.html"))
        WebDriverWait(browser, WAIT_SECONDS).until(
            lambda d: d.execute_script("return document.readyState") == "complete",
            message=f"the landing page not loaded after {WAIT_SECONDS} s",
        )
        right, width = browser.execute_script(
            "const table = document.querySelector('table.tpu-curriculum');"
            "return [table.getBoundingClientRect().right, document.documentElement.clientWidth];"
        )
        assert right <= width, f"the landing table ends at {right:.0f} px in a {width} px window"
    finally:
        browser.set_window_size(1366, 1000)
