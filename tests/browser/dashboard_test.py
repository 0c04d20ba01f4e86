#!/usr/bin/env python3
"""Drives the organization dashboard in a real headless Chromium (selenium).

Every page is checked at phone size (390x844, mobile emulation: the viewport meta counts) and
desktop size (1280x800), in French and in English (switched with the page's FR / EN links):
nothing lays out wider than the screen, <html lang> is right, known texts are shown, amounts
as each reader writes them (168 040,00 CDF / 168,040.00 CDF), times with their offset. One
browser session for everything, resized between sizes.

The scenario: French by default (the browser prefers French), English when it prefers English;
a wrong token is refused; sign in; Disable asks for confirmation, Cancel leaves the key
enabled, Confirm disables it (the next API call is answered 401); enable it again (200); find
the certified invoice in LogInvoices, open it (QR code, security elements, amount); download
the CSV export with the session's cookie; sign out.

Run by tests/system/browser.rs against a gateway on the simulator; by hand:

    .venv/bin/python tests/browser/dashboard_test.py --base http://127.0.0.1:8080 \
        --token mcf_dash_... --api-key mcf_live_...

With `--screens DIR` it also writes a PNG of each page at each size in each language
(`scripts/screens`, for docs/screens/). Exit status 0 when every check passed, 1 (with the
failed check on stderr) otherwise. Needs scripts/setup-browser (Debian chromium +
chromium-driver, selenium in .venv).
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
    "--hide-scrollbars",
    "--window-size=1280,800",
]

# name -> (width, height, mobile emulation)
SIZES = {"phone": (390, 844, True), "desktop": (1280, 800, False)}
# English first, so that each page's checks end in French, the flow's language.
LANGS = ("en", "fr")
FRENCH = "fr-CD,fr;q=0.9"
ENGLISH = "en-US,en;q=0.9"

# The invoice's total, as each reader writes it (U+202F between thousands, U+00A0 before the
# currency in French).
AMOUNT = {"fr": "168\u202f040,00\u00a0CDF", "en": "168,040.00 CDF"}

# Texts each page shows in each language (visible at both sizes: not table headings, which a
# phone shows as each card's labels).
TEXTS = {
    "sign-in": {"fr": ["Connexion", "Jeton du tableau de bord", "Se connecter"],
                "en": ["Sign in", "Dashboard token"]},
    "overview": {"fr": ["Vue d'ensemble", "Appareils", "répond", "pas encore utilisé",
                        "Dernier échange de l'appareil avec la DGI", "Détails techniques",
                        "Se déconnecter"],
                 "en": ["Overview", "Devices", "answering", "not used yet",
                        "Last exchange of the device with the DGI", "Technical details",
                        "Sign out"]},
    # The overview with an invoice in doubt (the settlement scenario).
    "in-doubt": {"fr": ["Vue d'ensemble", "1 facture en doute", "Une facture est en doute",
                        "Régler la facture n° "],
                 "en": ["Overview", "1 invoice in doubt", "One invoice is in doubt",
                        "Settle invoice No. "]},
    # The overview right after the settlement.
    "settled": {"fr": ["réglée comme non certifiée"],
                "en": ["settled as not certified"]},
    "keys": {"fr": ["Clés API", "Désactiver", "Émettre une nouvelle clé API"],
             "en": ["API keys", "Disable", "Issue a new API key"]},
    "confirm-disable": {"fr": ["Désactiver la clé", "seront refusées aussitôt", "Annuler"],
                        "en": ["Disable key", "will be refused at once", "Cancel"]},
    "invoices": {"fr": ["Registre de production", AMOUNT["fr"], "UTC+01:00"],
                 "en": ["Production register", AMOUNT["en"], "UTC+01:00"]},
    "invoice": {"fr": ["Éléments de sécurité", "Totaux (de l'appareil)", AMOUNT["fr"], "UTC+01:00"],
                "en": ["Security elements", "Totals (from the device)", AMOUNT["en"], "UTC+01:00"]},
}
# Texts of the flow, in French (the flow's language).
SAID = {
    "bad-token": "jeton de tableau de bord n'est pas valide",
    "disabled": "est désactivée",
    "yes": "oui",
    "no": "non",
    "disable": "Désactiver",
    "signed-out": "Vous êtes déconnecté",
}


# What a shop owner must not meet outside the collapsed "technical details": the protocol's
# command codes and link states, the register's internal names, English enum names, HTTP
# statuses, the devices' configured names.
PROTOCOL_WORDS = (r"\b(C[0-9A-F]h|[0-9A-F]{2}h|CON|DIS|TRA|RES|STA|finalize|reconciled|rn|"
                  r"LogInvoices|embedded|sandbox-[a-z0-9-]+|start|grow|HTTP [0-9]{3})\b")


class CheckFailed(Exception):
    """One expectation of the scenario did not hold."""


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


def step(text):
    print(f"[browser] {text}", flush=True)


def invoice(rn):
    """A valid invoice of 168 040,00 CDF (two items of 84 020,00, group B, paid in cash)."""
    return {
        "rn": rn,
        "mode": "ttc",
        "type": "FV",
        "curCode": "CDF",
        "curRate": "-1",
        "items": [
            {"code": "LR 1515", "name": "STYLO BIC", "type": "BIE", "price": "84020.00",
             "quantity": "2", "taxGroup": "B"}
        ],
        "client": {"nif": "A7654321C", "type": "PM", "name": "CLIENT SARL",
                   "contact": "+243 810 000 001", "address": "Gombe, Kinshasa"},
        "payments": [{"name": "ESPECES", "amount": "168040.00", "curCode": "CDF",
                      "curRate": "-1"}],
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
        self.checked = 0
        self.user_agent = self.driver.execute_script("return navigator.userAgent")
        self.prefer(FRENCH)
        self.resize("desktop")

    # ---- browser set-up ----

    def prefer(self, accept_language):
        """The browser's Accept-Language from now on."""
        self.driver.execute_cdp_cmd("Emulation.setUserAgentOverride", {
            "userAgent": self.user_agent, "acceptLanguage": accept_language})

    def resize(self, size):
        width, height, mobile = SIZES[size]
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
        self.size = size

    def shot(self, name):
        """A screenshot on failure (--screenshots DIR)."""
        if not self.args.screenshots:
            return
        os.makedirs(self.args.screenshots, exist_ok=True)
        self.shots += 1
        path = os.path.join(self.args.screenshots, f"{self.shots:02d}-{name}.png")
        self.driver.save_screenshot(path)

    # ---- helpers ----

    def find(self, css):
        return self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, css)))

    def click_and_wait(self, css, url_part):
        self.find(css).click()
        self.wait.until(EC.url_contains(url_part))

    def text(self, css):
        return self.find(css).text.strip()

    def page_text(self):
        """The page's visible text, no-break spaces kept (WebDriver's text makes them spaces)."""
        return self.driver.execute_script("return document.body.innerText")

    def lang(self):
        return self.driver.execute_script("return document.documentElement.lang")

    def switch(self, lang):
        """The page in `lang`, with its FR / EN switch (a link, no script)."""
        if self.lang() == lang:
            return
        before = self.driver.current_url
        self.find(f"#lang-{lang}").click()
        self.wait.until(lambda d: d.execute_script(
            "return document.readyState") == "complete" and self.lang() == lang)
        check(self.driver.current_url == before,
              f"the switch went to {self.driver.current_url}, not back to {before}")

    # ---- the checks of one page ----

    def check_page(self, page):
        """`page` at each size, in each language: fits the screen, says its language, shows its
        texts. Leaves it at desktop size, in French."""
        d = self.driver
        for size in SIZES:
            self.resize(size)
            d.refresh()
            width = SIZES[size][0]
            for lang in LANGS:
                self.switch(lang)
                where = f"{page} at {size} size in {lang}"
                check(self.lang() == lang, f"{where}: <html lang={self.lang()!r}>")
                inner, scroll = d.execute_script(
                    "return [window.innerWidth, document.documentElement.scrollWidth]")
                # A phone widens its layout to fit what overflows (issue 13: 513 px at 390).
                check(inner == width and scroll <= inner,
                      f"{where}: laid out at {inner} px ({scroll} px of content) in a {width} px "
                      f"screen; beyond it: {self.widest(width)}")
                shown = self.page_text()
                for text in TEXTS[page][lang]:
                    check(text in shown, f"{where}: {text!r} not shown")
                self.checked += 1
                if self.args.screens:
                    os.makedirs(self.args.screens, exist_ok=True)
                    d.save_screenshot(os.path.join(self.args.screens,
                                                   f"{page}-{size}-{lang}.png"))

    def widest(self, width):
        """The elements that reach beyond `width`, to say what overflows."""
        return self.driver.execute_script("""
            const w = arguments[0], out = [];
            for (const e of document.querySelectorAll('body *')) {
              const r = e.getBoundingClientRect();
              if (r.right > w + 1) out.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
                + (e.className ? '.' + e.className : '') + ' ' + Math.round(r.right));
            }
            return out.slice(0, 8).join(', ');""", width)

    def check_id_does_not_wrap(self, css):
        """A key id in a table cell stays on one or two lines (never a character a line)."""
        for size in SIZES:
            self.resize(size)
            height = self.driver.execute_script(
                "const e = document.querySelector(arguments[0]);"
                "return e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight || 16);",
                css)
            check(height < 2.5, f"{css} at {size} size is {height:.1f} lines high")
        self.resize("desktop")

    def plain_text(self):
        """The page's text without its <details> parts (technical details, forms folded)."""
        return self.driver.execute_script("""
            const main = document.querySelector('main').cloneNode(true);
            for (const d of main.querySelectorAll('details')) d.remove();
            return main.textContent;""")

    def check_plain_overview(self):
        """The overview in a shop owner's words: no protocol word outside the technical
        details (closed until asked), a grey badge for the sandbox not used yet, and nothing
        wider than a phone with the details open."""
        d = self.driver
        for size in SIZES:
            self.resize(size)
            for lang in LANGS:
                self.switch(lang)
                where = f"overview at {size} size in {lang}"
                found = d.execute_script(
                    "return (arguments[0].match(new RegExp(arguments[1], 'g')) || [])",
                    self.plain_text(), PROTOCOL_WORDS)
                check(not found, f"{where}: protocol words outside the technical details: {found}")
                details = self.find("details#technical")
                check(details.get_attribute("open") is None, f"{where}: details open by default")
                check("C2h" not in self.page_text(), f"{where}: C2h shown before it is asked")
                badge = self.find("#link-sandbox")
                check("idle" in badge.get_attribute("class").split(),
                      f"{where}: sandbox badge {badge.get_attribute('class')!r}")
                red, green, blue = d.execute_script(
                    "return getComputedStyle(arguments[0]).backgroundColor"
                    ".match(/[0-9]+/g).slice(0, 3).map(Number)", badge)
                check(not (red > green + 20 and red > blue + 20),
                      f"{where}: the unused sandbox's badge is red-ish rgb({red},{green},{blue})")
                self.find("details#technical summary").click()
                check("C2h" in self.page_text(), f"{where}: the details do not show C2h")
                inner, scroll = d.execute_script(
                    "return [window.innerWidth, document.documentElement.scrollWidth]")
                check(scroll <= inner, f"{where}: {scroll} px of content with the details open "
                                       f"in {inner} px; beyond it: {self.widest(inner)}")
                d.refresh()
        self.resize("desktop")

    def wait_for(self, css, present, within=20):
        """Reloads the page until `css` is (or is no longer) on it."""
        deadline = time.monotonic() + within
        while True:
            there = bool(self.driver.find_elements(By.CSS_SELECTOR, css))
            if there == present:
                return
            check(time.monotonic() < deadline,
                  f"{css} {'never came' if present else 'never went'} within {within} s")
            time.sleep(0.5)
            self.driver.refresh()

    def run_settlement(self):
        """An invoice in doubt on the overview (its section and the alert's banner agree),
        settled with its form: afterwards the green "settled" and no yellow "in doubt"."""
        d, base, args = self.driver, self.base, self.args
        step("sign in; the overview shows the invoice in doubt and the alert's banner")
        d.get(f"{base}/dashboard/login")
        self.find("#token").send_keys(args.token)
        self.find("#sign-in").click()
        self.wait.until(EC.url_matches(r".*/dashboard/$"))
        self.wait_for("#alert-in_doubt", True)
        check(self.find("#in-doubt") is not None, "no in-doubt section")
        self.check_page("in-doubt")

        step("settle it as the DGI's portal shows it (not certified), at phone size")
        self.resize("phone")
        d.refresh()
        summary = self.find("#in-doubt details summary")
        summary.click()
        form = self.find("#in-doubt details form")
        form.find_element(By.CSS_SELECTOR, "input[value='not_certified']").click()
        form.find_element(By.CSS_SELECTOR, "input[name='by']").send_keys("Marie K.")
        form.find_element(By.CSS_SELECTOR, "button[type='submit']").click()
        self.wait.until(EC.url_contains("settled=not_certified"))
        self.shot("settled")

        step("after the settlement the banners agree: settled, nothing in doubt")
        for size in SIZES:
            self.resize(size)
            d.refresh()
            for lang in LANGS:
                self.switch(lang)
                where = f"the overview after the settlement at {size} size in {lang}"
                check(not d.find_elements(By.CSS_SELECTOR, "#alert-in_doubt"),
                      f"{where}: the in-doubt banner is still shown")
                check(not d.find_elements(By.CSS_SELECTOR, "#in-doubt"),
                      f"{where}: the in-doubt section is still shown")
                notice = self.find("#notice")
                check("ok" in notice.get_attribute("class").split(),
                      f"{where}: no settled notice")
        self.check_page("settled")
        step(f"{self.checked} page views checked (pages x sizes x languages)")

    # ---- the scenario ----

    def run(self):
        d, base, args = self.driver, self.base, self.args
        key_id = args.api_key[9:21]

        step("not signed in: the dashboard leads to the sign-in page, in French by default")
        d.get(f"{base}/dashboard/")
        self.wait.until(EC.url_contains("/dashboard/login"))
        check(self.lang() == "fr", f"default language {self.lang()!r}")
        check("Connexion" in d.title, f"title {d.title!r}")

        step("a browser that prefers English gets English")
        self.prefer(ENGLISH)
        d.refresh()
        check(self.lang() == "en" and "Sign in" in d.title, f"{self.lang()!r} {d.title!r}")
        self.prefer(FRENCH)
        d.refresh()
        check(self.lang() == "fr", "French again")

        step("the sign-in page at phone and desktop size, in French and English")
        self.check_page("sign-in")
        width = d.execute_script("return document.getElementById('token').offsetWidth")
        check(width > 100, f"token box {width} px wide")

        step("a wrong token is refused with a clear message")
        self.find("#token").send_keys("mcf_dash_not_a_real_token")
        self.click_and_wait("#sign-in", "/dashboard/login")
        check(SAID["bad-token"] in self.text("#notice"), "no message for a bad token")
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
        self.check_page("overview")
        self.check_plain_overview()

        step(f"the keys page; key {key_id} does not wrap a character a line")
        self.click_and_wait("nav a[href='/dashboard/keys']", "/dashboard/keys")
        self.check_page("keys")
        self.check_id_does_not_wrap(f"#key-{key_id} code")
        check(self.text(f"#key-{key_id} td.enabled") == SAID["yes"], "key not listed as enabled")
        check(self.text(f"#toggle-{key_id}") == SAID["disable"], "no Disable button")

        step("Disable asks first; Cancel leaves the key enabled")
        self.click_and_wait(f"#toggle-{key_id}", "/dashboard/keys/disable?id=")
        check(key_id in self.text("#confirm-question"), "the question does not name the key")
        self.check_page("confirm-disable")
        self.click_and_wait("#cancel", "/dashboard/keys")
        check(self.text(f"#key-{key_id} td.enabled") == SAID["yes"], "Cancel disabled the key")

        step("Disable, Confirm: the key is disabled and the next API call is answered 401")
        self.click_and_wait(f"#toggle-{key_id}", "/dashboard/keys/disable?id=")
        self.click_and_wait("#confirm-disable", "disabled=")
        check(SAID["disabled"] in self.text("#notice"), "no confirmation")
        check(self.text(f"#key-{key_id} td.enabled") == SAID["no"], "key still enabled")
        self.shot("key-disabled")
        status, body = post_invoice(base, args.api_key, args.rn)
        check(status == 401, f"disabled key answered {status}: {body}")

        step("enable it again (one click): the call is certified (200)")
        self.click_and_wait(f"#toggle-{key_id}", "enabled=")
        check(self.text(f"#key-{key_id} td.enabled") == SAID["yes"], "key not enabled again")
        status, body = post_invoice(base, args.api_key, args.rn)
        check(status == 200, f"enabled key answered {status}: {body}")
        code = body["codeDEFDGI"]

        step(f"find invoice {args.rn} in LogInvoices and open it")
        self.click_and_wait("nav a[href='/dashboard/invoices']", "/dashboard/invoices")
        self.check_page("invoices")
        self.find("#rn").send_keys(args.rn)
        self.click_and_wait("#search", "rn=")
        links = [a for a in d.find_elements(By.CSS_SELECTOR, "#entries a.rn") if a.text == args.rn]
        check(len(links) == 1, f"{len(links)} entries found for rn {args.rn}")
        self.shot("search")
        links[0].click()
        self.wait.until(EC.url_contains("/dashboard/invoices/production/"))

        step("the detail shows the QR code (svg), the security elements and the amount")
        self.check_page("invoice")
        svg = self.find("figure#qr svg")
        check(svg.is_displayed(), "QR code not displayed")
        size = svg.size
        check(size["width"] >= 100 and size["height"] >= 100, f"QR code too small: {size}")
        check(self.text("#codeDEFDGI") == code, "codeDEFDGI differs from the API's")
        check(self.text("#qrCode").startswith("RDCDEF01;"), "qrCode text missing")
        check(self.text("#counters") != "" and self.text("#nim") != "", "counters or nim missing")
        check(self.text("#rn") == args.rn, "rn differs")
        total = d.execute_script("return document.getElementById('total').innerText")
        check(total == AMOUNT["fr"], f"total shown as {total!r}")

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
        check(SAID["signed-out"] in self.text("#notice"), "no sign-out message")
        d.get(f"{base}/dashboard/keys")
        self.wait.until(EC.url_contains("/dashboard/login"))
        self.shot("signed-out")
        step(f"{self.checked} page views checked (pages x sizes x languages)")

    def close(self):
        try:
            self.driver.quit()
        except WebDriverException:
            pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="gateway URL, e.g. http://127.0.0.1:8080")
    parser.add_argument("--token", required=True, help="dashboard token")
    parser.add_argument("--api-key", default="",
                        help="an enabled production API key (the main scenario's)")
    parser.add_argument("--rn", default=f"WEB-{int(time.time())}", help="invoice number to certify")
    parser.add_argument("--org-name", default="", help="organization name the pages should show")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    parser.add_argument("--screenshots", default="", help="directory for screenshots (optional)")
    parser.add_argument("--scenario", default="main", choices=("main", "settlement"),
                        help="main: the whole flow; settlement: an invoice in doubt settled")
    parser.add_argument("--screens", default="",
                        help="directory for a PNG of each page at each size in each language")
    args = parser.parse_args()
    started = time.monotonic()
    scenario = Scenario(args)
    try:
        if args.scenario == "settlement":
            scenario.run_settlement()
        else:
            scenario.run()
    except (CheckFailed, TimeoutException, WebDriverException) as error:
        scenario.shot("failure")
        print(f"[browser] FAILED: {type(error).__name__}: {error}", file=sys.stderr)
        print(f"[browser] at {scenario.driver.current_url}", file=sys.stderr)
        return 1
    finally:
        scenario.close()
    print(f"[browser] all checks passed in {time.monotonic() - started:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
