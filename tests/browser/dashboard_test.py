#!/usr/bin/env python3
"""Drives the organization dashboard in a real headless Chromium (selenium).

Signs in with a dashboard token, disables an API key and checks that the next API call with
it is answered 401, enables it again (200), finds the certified invoice by rn in
LogInvoices, opens it and checks its QR code (an <svg>) and security elements, downloads the
CSV export with the session's cookie, and signs out.

Run by tests/browser.rs against a gateway on the simulator; by hand:

    .venv/bin/python tests/browser/dashboard_test.py --base http://127.0.0.1:8080 \
        --token mcf_dash_... --api-key mcf_live_...

Exit status 0 when every check passed, 1 (with the failed check on stderr) otherwise.
Needs scripts/setup-browser (Debian chromium + chromium-driver, selenium in .venv).
"""

import argparse
import csv
import io
import json
import os
import sys
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1280,1024",
]


class CheckFailed(Exception):
    """One expectation of the scenario did not hold."""


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


def step(text):
    print(f"[browser] {text}", flush=True)


def invoice(rn):
    """The same small valid invoice as tests/common/mod.rs `invoice`."""
    return {
        "rn": rn,
        "mode": "ttc",
        "type": "FV",
        "curCode": "CDF",
        "curRate": "-1",
        "items": [
            {"code": "LR 1515", "name": "STYLO BIC", "type": "BIE", "price": "600.00",
             "quantity": "2", "taxGroup": "B"}
        ],
        "client": {"nif": "A7654321C", "type": "PM", "name": "CLIENT SARL",
                   "contact": "+243 810 000 001", "address": "Gombe, Kinshasa"},
        "payments": [{"name": "ESPECES", "amount": "1200.00", "curCode": "CDF", "curRate": "-1"}],
        "operator": {"id": "1", "name": "Caisse 1"},
    }


def post_invoice(base, key, rn):
    """POST /api/v1/Invoice; returns (status, parsed JSON body or None)."""
    body = json.dumps(invoice(rn)).encode()
    request = urllib.request.Request(
        f"{base}/api/v1/Invoice", data=body, method="POST",
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        text = error.read()
        try:
            return error.code, json.loads(text)
        except ValueError:
            return error.code, None


def get_with_cookie(url, cookie):
    request = urllib.request.Request(url, headers={"Cookie": cookie})
    with urllib.request.urlopen(request, timeout=30) as response:
        headers = {name.lower(): value for name, value in response.headers.items()}
        return response.status, headers, response.read().decode()


class Scenario:
    def __init__(self, args):
        self.args = args
        self.base = args.base.rstrip("/")
        options = webdriver.ChromeOptions()
        options.binary_location = args.chromium
        for arg in CHROMIUM_ARGS:
            options.add_argument(arg)
        self.driver = webdriver.Chrome(service=Service(executable_path=args.chromedriver),
                                       options=options)
        self.driver.set_page_load_timeout(30)
        self.wait = WebDriverWait(self.driver, 15)
        self.shots = 0

    def shot(self, name):
        if not self.args.screenshots:
            return
        os.makedirs(self.args.screenshots, exist_ok=True)
        self.shots += 1
        path = os.path.join(self.args.screenshots, f"{self.shots:02d}-{name}.png")
        self.driver.save_screenshot(path)

    def find(self, css):
        return self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, css)))

    def click_and_wait(self, css, url_part):
        self.find(css).click()
        self.wait.until(EC.url_contains(url_part))

    def text(self, css):
        return self.find(css).text.strip()

    def run(self):
        d, base, args = self.driver, self.base, self.args
        key_id = args.api_key[9:21]

        step("not signed in: the dashboard leads to the sign-in page")
        d.get(f"{base}/dashboard/")
        self.wait.until(EC.url_contains("/dashboard/login"))
        check("Sign in" in d.title, f"title {d.title!r}")

        step("a wrong token is refused with a clear message")
        self.find("#token").send_keys("mcf_dash_not_a_real_token")
        self.click_and_wait("#sign-in", "/dashboard/login")
        check("token is not valid" in self.text("#notice"), "no message for a bad token")
        self.shot("bad-token")

        step("sign in with the dashboard token")
        self.find("#token").send_keys(args.token)
        self.find("#sign-in").click()
        self.wait.until(EC.url_matches(r".*/dashboard/$"))
        check(self.find("meter#quota") is not None, "no quota gauge")
        check(args.org_name in self.text("#org-name"), "organization name not shown")
        cookie = d.get_cookie("emcf_session")
        check(cookie is not None, "no session cookie")
        check(cookie.get("httpOnly") is True, f"session cookie not HttpOnly: {cookie}")
        check(cookie.get("sameSite") == "Strict", f"session cookie not SameSite=Strict: {cookie}")
        self.shot("overview")

        step(f"disable API key {key_id}")
        self.click_and_wait("nav a[href='/dashboard/keys']", "/dashboard/keys")
        check(self.text(f"#key-{key_id} td.enabled") == "yes", "key not listed as enabled")
        check(self.text(f"#toggle-{key_id}") == "Disable", "no Disable button")
        self.click_and_wait(f"#toggle-{key_id}", "disabled=")
        check("disabled" in self.text("#notice"), "no confirmation")
        check(self.text(f"#key-{key_id} td.enabled") == "no", "key still enabled")
        self.shot("key-disabled")

        step("the next API call with that key is answered 401")
        status, body = post_invoice(base, args.api_key, args.rn)
        check(status == 401, f"disabled key answered {status}: {body}")

        step("enable it again: the call is certified (200)")
        self.click_and_wait(f"#toggle-{key_id}", "enabled=")
        check(self.text(f"#key-{key_id} td.enabled") == "yes", "key not enabled again")
        status, body = post_invoice(base, args.api_key, args.rn)
        check(status == 200, f"enabled key answered {status}: {body}")
        code = body["codeDEFDGI"]

        step(f"find invoice {args.rn} in LogInvoices and open it")
        self.click_and_wait("nav a[href='/dashboard/invoices']", "/dashboard/invoices")
        self.find("#rn").send_keys(args.rn)
        self.click_and_wait("#search", "rn=")
        links = [a for a in d.find_elements(By.CSS_SELECTOR, "#entries a.rn") if a.text == args.rn]
        check(len(links) == 1, f"{len(links)} entries found for rn {args.rn}")
        self.shot("search")
        links[0].click()
        self.wait.until(EC.url_contains("/dashboard/invoices/production/"))

        step("the detail shows the QR code (svg) and the security elements")
        svg = self.find("figure#qr svg")
        check(svg.is_displayed(), "QR code not displayed")
        size = svg.size
        check(size["width"] >= 100 and size["height"] >= 100, f"QR code too small: {size}")
        check(self.text("#codeDEFDGI") == code, "codeDEFDGI differs from the API's")
        check(self.text("#qrCode").startswith("RDCDEF01;"), "qrCode text missing")
        check(self.text("#counters") != "" and self.text("#nim") != "", "counters or nim missing")
        check(self.text("#rn") == args.rn, "rn differs")
        self.shot("detail")

        step("the CSV export downloads the register with the session")
        self.click_and_wait("a[href^='/dashboard/invoices?env=production']", "/dashboard/invoices")
        href = self.find("#csv").get_attribute("href")
        status, headers, text = get_with_cookie(href, f"emcf_session={cookie['value']}")
        check(status == 200 and "attachment" in headers.get("content-disposition", ""),
              f"CSV answered {status} {headers}")
        rows = list(csv.DictReader(io.StringIO(text)))
        check(any(r["rn"] == args.rn and r["codeDEFDGI"] == code for r in rows),
              "the CSV lacks the invoice")

        step("sign out")
        self.click_and_wait("#sign-out", "signed_out=1")
        check("signed out" in self.text("#notice"), "no sign-out message")
        d.get(f"{base}/dashboard/keys")
        self.wait.until(EC.url_contains("/dashboard/login"))
        self.shot("signed-out")

    def close(self):
        try:
            self.driver.quit()
        except WebDriverException:
            pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="gateway URL, e.g. http://127.0.0.1:8080")
    parser.add_argument("--token", required=True, help="dashboard token")
    parser.add_argument("--api-key", required=True, help="an enabled production API key")
    parser.add_argument("--rn", default=f"WEB-{int(time.time())}", help="invoice number to certify")
    parser.add_argument("--org-name", default="", help="organization name the pages should show")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    parser.add_argument("--screenshots", default="", help="directory for screenshots (optional)")
    args = parser.parse_args()
    scenario = Scenario(args)
    try:
        scenario.run()
    except (CheckFailed, TimeoutException, WebDriverException) as error:
        scenario.shot("failure")
        print(f"[browser] FAILED: {type(error).__name__}: {error}", file=sys.stderr)
        print(f"[browser] at {scenario.driver.current_url}", file=sys.stderr)
        return 1
    finally:
        scenario.close()
    print("[browser] all checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
