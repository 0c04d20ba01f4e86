#!/usr/bin/env python3
"""Certify one invoice with emcf-gateway, the way an ERP should (Python 3, standard library).

    EMCF_URL=http://127.0.0.1:8080 EMCF_KEY=mcf_live_... python3 emcf_client.py [RN]

EMCF_LANG: the language of the person who reads the ERP's messages, fr (the default) or en;
errorDesc and warningDesc come in it (Accept-Language). Send your user's language, not "en".

1. POST /api/v1/Invoice with the invoice (rn from the command line, else a new unique one).
2. Retry the SAME body (same rn) only when the answer says so: 503 or 409 with Retry-After,
   waiting Retry-After (longer if it repeats). No answer at all (gateway down, connection cut,
   timeout): back off exponentially, but first ask GET /api/v1/Invoice/{rn} whether the lost
   request was certified (200: it was; 404: it was not, send it again). Any other answer is
   final: a person must fix the invoice, the key, the plan or the setup (README, "Worth a retry?").
   A 200 whose body cannot be read is a lost answer too.
3. Print the security elements and the OK line (the result: store it), then save the QR code
   (GET /api/v1/Invoice/{rn}/qr.svg) to put on the customer's document. The gateway also
   serves the whole fiscal block ready to print: /api/v1/Invoice/{rn}/receipt.html (A4 or
   80 mm) and receipt.escpos (thermal printers).

The last line is machine-checkable: OK rn=... codeDEFDGI=... counters="..." nim=... qrSvg=...
(qrSvg: where the QR code is saved right after that line).
Exit status: 0 certified, 1 refused (see the FAIL line), 2 usage, 3 gave up (outcome unknown:
run again later with the same rn), 4 certified but the QR code not saved (the OK line stands:
do NOT certify again; fetch qr.svg later).
"""

import http.client
import json
import os
import random
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

URL = os.environ.get("EMCF_URL", "http://127.0.0.1:8080").rstrip("/")
KEY = os.environ.get("EMCF_KEY", "")
TIMEOUT = float(os.environ.get("EMCF_TIMEOUT", "60"))  # seconds for one HTTP exchange
MAX_TRIES = int(os.environ.get("EMCF_MAX_TRIES", "8"))
MAX_WAIT = 60.0  # never wait longer than this between two tries
OUT_DIR = os.environ.get("EMCF_OUT", ".")
# The language the ERP's user reads: errorDesc and warningDesc come in it. French by default.
LANG = os.environ.get("EMCF_LANG", "").strip() or "fr"


class NoAnswer(Exception):
    """The request got no HTTP answer: refused, cut, or timed out."""


class Refused(Exception):
    """A final answer: retrying the same request cannot help."""


def invoice(rn):
    """A sale of two pens at 600.00 CDF, tax group B, prices including tax, paid in cash.
    Amounts are strings (or JSON numbers), always in CDF, also for a USD invoice (curCode USD,
    curRate = CDF per USD): convert USD prices before sending them."""
    return {
        "rn": rn,
        "mode": "ttc",
        "type": "FV",
        "curCode": "CDF",
        "curRate": "-1",
        "items": [
            {"code": "LR 1515", "name": "STYLO BIC", "type": "BIE",
             "price": "600.00", "quantity": "2", "taxGroup": "B"}
        ],
        "client": {"nif": "A7654321C", "type": "PM", "name": "CLIENT SARL",
                   "contact": "+243 810 000 001", "address": "Gombe, Kinshasa"},
        "payments": [{"name": "ESPECES", "amount": "1200.00", "curCode": "CDF", "curRate": "-1"}],
        "operator": {"id": "1", "name": "Caisse 1"},
    }


def call(method, path, body=None):
    """One HTTP exchange: (status, headers, raw body). Raises NoAnswer when none came."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(URL + path, data=data, method=method)
    request.add_header("Authorization", "Bearer " + KEY)
    request.add_header("Accept-Language", LANG)  # errorDesc/warningDesc in the user's language
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as answer:  # 4xx/5xx: an answer all the same
            return answer.code, answer.headers, answer.read()
    # A body cut short (IncompleteRead) or a malformed answer (HTTPException) is no answer either.
    except (urllib.error.URLError, http.client.HTTPException, socket.timeout, OSError) as error:
        raise NoAnswer(str(getattr(error, "reason", None) or repr(error))) from error


def as_json(raw):
    try:
        return json.loads(raw.decode("utf-8"))
    except ValueError:
        return {}


def retry_after(headers):
    """Retry-After in seconds, or None (the gateway sends seconds)."""
    value = headers.get("Retry-After")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def backoff(tries):
    """1, 2, 4, 8... seconds, capped, with a little jitter so that tills do not retry together."""
    return min(MAX_WAIT, 2.0 ** (tries - 1)) * random.uniform(0.8, 1.2)


def certify(body):
    rn = body["rn"]
    path = "/api/v1/Invoice/" + urllib.parse.quote(rn, safe="")
    lost = None  # why the last answer was lost: look the rn up before sending it again
    for tries in range(1, MAX_TRIES + 1):
        if lost is None:
            try:
                status, headers, raw = call("POST", "/api/v1/Invoice", body)
            except NoAnswer as error:
                lost = str(error)
        if lost is not None:
            # Sent or not? Ask by rn before sending it again (sending again is safe too: the
            # gateway never certifies an rn twice, but this avoids a second queue place).
            log(f"no answer ({lost}); asking GET {path} (try {tries}/{MAX_TRIES})")
            lost = None
            try:
                status, headers, raw = call("GET", path)
            except NoAnswer:
                wait(backoff(tries), "the gateway does not answer")
                continue
            if status == 404:
                log("not certified: sending it again")
                continue
        answer = as_json(raw)
        if status == 200:
            if isinstance(answer, dict) and answer.get("codeDEFDGI"):
                return answer
            lost = "a 200 whose body cannot be read"  # certified, surely: ask for the result
            continue
        if not isinstance(answer, dict):
            answer = {}
        delay = retry_after(headers)
        if status in (503, 409) and delay is not None:
            # Worth a retry: the same request, after Retry-After (longer if it repeats).
            wait(max(delay, backoff(tries) if tries > 1 else 0), describe(status, answer))
            continue
        desc = answer.get("errorDesc", raw[:200].decode("utf-8", "replace"))
        raise Refused(f"status={status} errorCode={answer.get('errorCode')} "
                      f"errorDesc={json.dumps(desc, ensure_ascii=False)}")
    raise TimeoutError(f"no result after {MAX_TRIES} tries: run again later with rn {rn}")


def describe(status, answer):
    return f"{status} errorCode {answer.get('errorCode')}: {answer.get('errorDesc', '')}"


def wait(seconds, why):
    seconds = min(seconds, MAX_WAIT)
    log(f"{why}; retrying the same request in {seconds:.1f} s")
    time.sleep(seconds)


def log(text):
    print(text, file=sys.stderr, flush=True)


def qr_path(rn):
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in rn)
    return os.path.join(OUT_DIR, f"{safe}-qr.svg")


def save_qr(rn, path):
    """The QR code to print, as SVG (receipt.html / receipt.escpos give the whole block)."""
    status, _, raw = call("GET", "/api/v1/Invoice/" + urllib.parse.quote(rn, safe="") + "/qr.svg")
    if status != 200:
        raise Refused(f"qr.svg: status={status}")
    with open(path, "wb") as file:
        file.write(raw)


def main():
    for stream in (sys.stdout, sys.stderr):
        # A console that cannot show a character of a French text shows it escaped, no crash.
        stream.reconfigure(errors="backslashreplace")
    if not KEY:
        log("set EMCF_KEY (and EMCF_URL): EMCF_KEY=mcf_live_... python3 emcf_client.py [RN]")
        return 2
    rn = sys.argv[1] if len(sys.argv) > 1 else f"PY-{int(time.time())}-{random.randrange(10**6):06d}"
    try:
        result = certify(invoice(rn))
    except Refused as refused:
        print(f"FAIL rn={rn} {refused}", flush=True)
        return 1
    except (TimeoutError, NoAnswer) as gave_up:
        print(f"FAIL rn={rn} {gave_up}", flush=True)
        return 3
    # Store these with the invoice and print them on it (codeDEFDGI in clear, counters, nim,
    # and the QR code of qrCode).
    for name in ("codeDEFDGI", "counters", "nim", "qrCode", "dateTime", "total", "vtotal"):
        print(f"{name}: {result.get(name)}")
    for warning in result.get("warnings", []):
        # Certified all the same, but show it to a person (e.g. 301: USD amounts sent as CDF).
        print(f"WARNING {warning['warningCode']}: {warning['warningDesc']}")
    path = qr_path(rn)
    print(f"OK rn={rn} codeDEFDGI={result['codeDEFDGI']} counters=\"{result['counters']}\" "
          f"nim={result['nim']} qrSvg={path}", flush=True)
    # The invoice is certified whatever happens now: a QR code not saved is no refusal (never
    # certify it again under another rn); the same GET gives it later.
    try:
        save_qr(rn, path)
    except (Refused, NoAnswer, OSError) as error:
        log(f"WARNING rn={rn} certified, QR code not saved ({error}): "
            f"fetch GET /api/v1/Invoice/{rn}/qr.svg later")
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main())
