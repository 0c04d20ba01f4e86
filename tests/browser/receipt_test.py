#!/usr/bin/env python3
"""The printable fiscal block (receipt.html and the dashboard's print) in a real headless
Chromium (selenium): each page given fits a phone (390x844, mobile emulation) and a desktop
(1280x800) screen without a horizontal scroll, its codeDEFDGI shown whole; and printed, the A4
layout is the A4 block (QR code beside the lines, two columns of lines, 190 mm wide) whatever
the screen.

Run by tests/system/browser.rs (`receipt_pages_fit_a_phone_in_headless_chromium`); by hand:

    .venv/bin/python tests/browser/receipt_test.py --base http://127.0.0.1:8080 \
        --api-key mcf_live_... --path /api/v1/Invoice/F-1/receipt.html \
        --session <emcf_session cookie> --path /dashboard/invoices/production/1/receipt

API paths get the key as `Authorization`, dashboard paths the session cookie. Exit status 0
when every check passed, 1 (with the failed check on stderr) otherwise.
"""

import argparse
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service

CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--window-size=1280,800",
]

# name -> (width, height, mobile emulation)
SIZES = {"phone": (390, 844, True), "desktop": (1280, 800, False)}

# 190 mm in CSS pixels (96 per inch).
A4_BLOCK_PX = 190 / 25.4 * 96


class CheckFailed(Exception):
    """One expectation did not hold."""


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True)
    parser.add_argument("--api-key", required=True)
    parser.add_argument("--session", required=True, help="the dashboard's emcf_session cookie")
    parser.add_argument("--path", action="append", required=True,
                        help="a receipt page (API or dashboard), with its query")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    args = parser.parse_args()
    started = time.monotonic()
    options = webdriver.ChromeOptions()
    options.binary_location = args.chromium
    for arg in CHROMIUM_ARGS:
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=args.chromedriver),
                              options=options)
    driver.set_page_load_timeout(30)
    checked = 0
    try:
        base = args.base.rstrip("/")
        driver.get(f"{base}/dashboard/login")
        driver.add_cookie({"name": "emcf_session", "value": args.session, "path": "/dashboard",
                           "httpOnly": True, "sameSite": "Strict"})
        driver.execute_cdp_cmd("Network.enable", {})
        for path in args.path:
            headers = {} if path.startswith("/dashboard/") else {
                "Authorization": f"Bearer {args.api_key}"}
            driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": headers})
            for size, (width, height, mobile) in SIZES.items():
                driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                    "width": width, "height": height, "deviceScaleFactor": 1,
                    "mobile": mobile})
                driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "screen"})
                driver.get(f"{base}{path}")
                where = f"{path} at {size} size"
                check(driver.find_elements("id", "fiscal-block"), f"{where}: no fiscal block")
                inner, scroll, right, code = driver.execute_script("""
                    const block = document.getElementById('fiscal-block');
                    const code = document.getElementById('codeDEFDGI');
                    return [window.innerWidth, document.documentElement.scrollWidth,
                            block.getBoundingClientRect().right,
                            code.getBoundingClientRect().right];""")
                check(inner == width and scroll <= inner and right <= inner and code <= inner,
                      f"{where}: laid out at {inner} px ({scroll} px of content, the block "
                      f"to {right:.0f} px, the codeDEFDGI to {code:.0f} px) in a {width} px "
                      f"screen; beyond it: {widest(driver, width)}")
                checked += 1
                if "layout=a4" in path or "layout=" not in path:
                    printed(driver, where)
        print(f"[receipt] {checked} receipt views checked in "
              f"{time.monotonic() - started:.1f} s", flush=True)
    except (CheckFailed, TimeoutException, WebDriverException) as error:
        print(f"[receipt] FAILED: {type(error).__name__}: {error}", file=sys.stderr)
        print(f"[receipt] at {driver.current_url}", file=sys.stderr)
        return 1
    finally:
        try:
            driver.quit()
        except WebDriverException:
            pass
    print("[receipt] all checks passed", flush=True)
    return 0


def printed(driver, where):
    """The A4 page as printed (print media, a window wider than the block): the A4 block, the
    QR code beside two columns of lines, whatever the screen was."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": 800, "height": 1100, "deviceScaleFactor": 1, "mobile": False})
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    columns, details, width = driver.execute_script("""
        const style = e => getComputedStyle(document.querySelector(e));
        return [style('#fiscal-block').gridTemplateColumns.split(' ').length,
                style('.details').gridTemplateColumns.split(' ').length,
                document.getElementById('fiscal-block').getBoundingClientRect().width];""")
    check(columns == 2 and details == 2 and abs(width - A4_BLOCK_PX) < 2,
          f"{where}, printed: {columns} columns, lines in {details}, {width:.0f} px wide "
          f"(the A4 block: 2, 2, {A4_BLOCK_PX:.0f})")
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "screen"})


def widest(driver, width):
    """The elements that reach beyond `width`, to say what overflows."""
    return driver.execute_script("""
        const w = arguments[0], out = [];
        for (const e of document.querySelectorAll('body *')) {
          const r = e.getBoundingClientRect();
          if (r.right > w + 1) out.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
            + ' ' + Math.round(r.right));
        }
        return out.slice(0, 8).join(', ');""", width)


if __name__ == "__main__":
    sys.exit(main())
