#!/usr/bin/env python3
"""Independent simulator of the DR Congo DGI "e-MCF web API" (e-DEF).

Written only from the public evidence on the web API (restated in the
repository's docs/web-api.md), plus the seed's tax-group table.  Standard library only.  Every choice made where the
document is silent or marked "unknown" is written in a comment tagged CHOICE.

    python3 server.py --listen 127.0.0.1:0 --token TOKEN --nif NIF --nim NIM \
        [--pending-limit 10] [--expiry-secs 120]
"""

import argparse
import base64
import hashlib
import json
import sys
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSION = "1.0"  # CHOICE: integrators cite "e-MCF API 1.0".
# CHOICE: server clock is Kinshasa time (UTC+01:00, no DST).
KINSHASA = timezone(timedelta(hours=1))
GROUPS = "ABCDEFGHIJKLMNOP"
# Rates of the live test account quoted in docs/web-api.md §2 (the seed's table);
# they can be overridden with --tax-rates (e.g. "c=8,g=8").
DEFAULT_RATES = {"B": 16, "F": 16, "C": 5, "G": 5, "O": 1, "P": 1}
INVOICE_TYPES = [("FV", "Facture de vente"), ("FT", "Facture d'acompte"),
                 ("FA", "Facture d'avoir"), ("EV", "Facture de vente à l'exportation"),
                 ("ET", "Facture d'acompte à l'exportation"),
                 ("EA", "Facture d'avoir à l'exportation")]
CREDIT_NOTES = {"FA": ("FV", "FT"), "EA": ("EV", "ET")}  # note type -> allowed originals
PAYMENT_TYPES = [("ESPECES", "Espèces"), ("VIREMENT", "Virement"),
                 ("CARTEBANCAIRE", "Carte bancaire"), ("MOBILEMONEY", "Mobile money"),
                 ("CHEQUES", "Chèques"), ("CREDIT", "Crédit"), ("AUTRE", "Autre")]
CLIENT_TYPES = [("PP", "Personne physique"), ("PM", "Personne morale"),
                ("PC", "Commerçant"), ("PL", "Profession libérale"),
                ("AO", "Ambassade / organisation internationale")]
REFERENCE_TYPES = [("COR", "Correction"), ("RAN", "Annulation"),
                   ("RAM", "Remise / rabais"), ("RRR", "Retour de marchandises")]
ITEM_TYPES = [("BIE", "Bien"), ("SER", "Service"), ("TAX", "Taxe")]
CENT = Decimal("0.01")
MAX_BODY = 1 << 20


class ApiError(Exception):
    """A DGI-style business error: answered as HTTP 400 {errorCode, errorDesc}."""

    def __init__(self, code, desc):
        super().__init__(desc)
        self.code = code
        self.desc = desc


def round2(value):
    """Round a Decimal to 2 places, half away from zero.

    CHOICE: amounts are CDF with 2 decimals (the doc: clients send at most 2
    decimals), rounded ROUND_HALF_UP (the usual commercial rule).
    """
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def to_decimal(value, field):
    """Accept a JSON number (int/Decimal) or a numeric string; refuse anything else."""
    if isinstance(value, bool) or value is None:
        raise ApiError("99", f"{field}: number expected")
    if isinstance(value, (int, Decimal)):
        result = Decimal(value)
    elif isinstance(value, str):
        try:
            result = Decimal(value.strip())
        except InvalidOperation:
            raise ApiError("99", f"{field}: invalid number {value!r}") from None
    else:
        raise ApiError("99", f"{field}: number expected")
    if not result.is_finite():
        raise ApiError("99", f"{field}: invalid number")
    return result


def dumps(obj):
    """Serialize to JSON, writing Decimals as exact JSON numbers (never floats)."""
    if isinstance(obj, Decimal):
        return format(obj, "f")
    if isinstance(obj, dict):
        return "{" + ",".join(json.dumps(str(k)) + ":" + dumps(v) for k, v in obj.items()) + "}"
    if isinstance(obj, (list, tuple)):
        return "[" + ",".join(dumps(v) for v in obj) + "]"
    return json.dumps(obj, ensure_ascii=False)


def iso(dt):
    """ISO 8601 with offset, second precision (CHOICE for date-time fields)."""
    return dt.isoformat(timespec="seconds")


def reject_constant(name):
    """json.loads hook: refuse NaN / Infinity."""
    raise ValueError(name)


def text(value):
    """Return a stripped string, or '' for None/non-strings."""
    return value.strip() if isinstance(value, str) else ""


class EmcfState:
    """In-memory, lock-protected state of one e-MCF (one NIF, one NIM)."""

    def __init__(self, nif, nim, rates, pending_limit, expiry_secs, token_valid):
        self.nif, self.nim, self.rates = nif, nim, rates
        self.pending_limit, self.expiry_secs = pending_limit, expiry_secs
        self.token_valid = token_valid
        self.lock = threading.Lock()
        self.pending = {}        # uid -> request record (insertion ordered)
        self.finalized = []      # public records, in confirmation order
        self.by_code = {}        # codeDEFDGI -> {"type", "total", "credited"}
        self.type_counters = {t: 0 for t, _ in INVOICE_TYPES}
        self.total_counter = 0
        self.drop_next = False

    # ----- housekeeping -------------------------------------------------
    def _purge(self):
        """Drop expired pending requests (caller holds the lock)."""
        now = time.monotonic()
        for uid in [u for u, r in self.pending.items() if now - r["mono"] >= self.expiry_secs]:
            del self.pending[uid]

    def header(self):
        """Fields shared by the two status calls."""
        with self.lock:
            self._purge()
            plist = [{"date": iso(r["created"]), "uid": u} for u, r in self.pending.items()]
        return {"status": True, "version": VERSION, "nif": self.nif, "nim": self.nim,
                "tokenValid": iso(self.token_valid),
                "serverDateTime": iso(datetime.now(KINSHASA)),
                "pendingRequestsCount": len(plist), "pendingRequestsList": plist}

    def pending_uids(self):
        """Uids of the live pending requests, oldest first."""
        with self.lock:
            self._purge()
            return list(self.pending)

    def finalized_list(self):
        """Copy of the finalized-invoice log."""
        with self.lock:
            return [dict(r) for r in self.finalized]

    def arm_drop(self):
        """Make the next successful confirm lose its answer."""
        with self.lock:
            self.drop_next = True

    # ----- invoice request ----------------------------------------------
    def compute(self, inv):
        """Validate an invoice request and compute the DGI figures (no state change)."""
        if not isinstance(inv, dict):
            raise ApiError("99", "invoice object expected")
        # CHOICE: nif is required and must be the token's NIF (the token is per NIF|NIM).
        if text(inv.get("nif")) != self.nif:
            raise ApiError("99", "nif missing or not the token's taxpayer")
        if not text(inv.get("rn")):
            raise ApiError("99", "rn (invoice number) is required")
        # CHOICE: mode is documented lowercase; accepted case-insensitively, as a
        # .NET enum binder would.
        mode = text(inv.get("mode")).lower()
        if mode not in ("ht", "ttc"):
            raise ApiError("99", "mode must be ht or ttc")
        itype = text(inv.get("type")).upper()
        if itype not in self.type_counters:
            raise ApiError("3", "invalid invoice type")
        self._check_client(inv)
        self._check_payments(inv.get("payment"))
        amounts, ts = self._sum_items(inv.get("items"))
        figures = {"t" + g.lower(): self.rates[g] for g in GROUPS}   # ta..tp: rates
        groups = {}
        for g in GROUPS:
            amount, rate = amounts.get(g, Decimal(0)), self.rates[g]
            if mode == "ttc":   # prices include VAT: extract HT from the group total
                ttc = round2(amount)
                ht = round2(ttc * 100 / (100 + rate))
                vat = ttc - ht
            else:               # prices exclude VAT: add VAT to the group total
                ht = round2(amount)
                vat = round2(ht * rate / 100)
                ttc = ht + vat
            groups[g] = (ttc, ht, vat)
        for idx, prefix in enumerate(("t", "h", "v")):
            for g in GROUPS:
                figures[prefix + "a" + g.lower()] = groups[g][idx]
        vtotal = sum((v for _, _, v in groups.values()), Decimal("0.00"))
        # CHOICE: total = sum of the group TTC totals + specific taxes (ts).
        total = sum((t for t, _, _ in groups.values()), Decimal("0.00")) + ts
        figures.update(ts=ts, total=total, vtotal=vtotal, curTotal=self._cur_total(inv, total))
        reference = self._check_reference(inv, itype, total)
        return itype, figures, reference

    def _check_client(self, inv):
        """Client object with a known type; AO needs an exemption reference in cmta."""
        client = inv.get("client")
        if not isinstance(client, dict):
            raise ApiError("99", "client is required")
        ctype = text(client.get("type")).upper()
        if ctype not in {t for t, _ in CLIENT_TYPES}:
            raise ApiError("99", "client.type must be PP, PM, PC, PL or AO")
        # CHOICE: the AO exemption reference is required in comment line A (cmta).
        if ctype == "AO" and not text(inv.get("cmta")):
            raise ApiError("99", "client type AO requires the exemption reference in cmta")

    def _check_payments(self, payments):
        """Optional payment list; each line {name, amount, currencyCode, currencyRate}."""
        if payments is None:
            return  # CHOICE: payment is optional (no sum check against the total).
        if not isinstance(payments, list):
            raise ApiError("7", "payment must be a list")
        names = {n for n, _ in PAYMENT_TYPES}
        for i, line in enumerate(payments):
            if not isinstance(line, dict) or text(line.get("name")).upper() not in names:
                raise ApiError("7", f"payment[{i}]: invalid payment type")
            if line.get("amount") is not None:
                to_decimal(line["amount"], f"payment[{i}].amount")

    def _sum_items(self, items):
        """Validate items; return ({group: sum of rounded line amounts}, ts)."""
        if not isinstance(items, list) or not items:
            raise ApiError("8", "no items")
        amounts, ts = {}, Decimal("0.00")
        for i, item in enumerate(items):
            where = f"items[{i}]"
            if not isinstance(item, dict):
                raise ApiError("99", f"{where}: object expected")
            group = text(item.get("taxGroup")).upper()
            if len(group) != 1 or group not in GROUPS:
                raise ApiError("9", f"{where}: invalid tax group")
            # CHOICE: item type optional; when present it must be BIE, SER or TAX.
            kind = text(item.get("type")).upper()
            if item.get("type") is not None and kind not in ("BIE", "SER", "TAX"):
                raise ApiError("99", f"{where}: type must be BIE, SER or TAX")
            if kind == "TAX" and group not in ("L", "N"):
                raise ApiError("9", f"{where}: TAX items only on groups L or N")
            if not text(item.get("name")):
                raise ApiError("99", f"{where}: name is required")
            price = to_decimal(item.get("price"), where + ".price")
            qty = to_decimal(item.get("quantity"), where + ".quantity")
            if price < 0 or qty <= 0:  # credit notes carry absolute values too
                raise ApiError("99", f"{where}: negative price or non-positive quantity")
            # CHOICE: each line is price x quantity rounded to 2 decimals; VAT is then
            # computed once per tax group (not per line).
            amounts[group] = amounts.get(group, Decimal(0)) + round2(price * qty)
            # CHOICE: taxSpecificAmount is per unit; "" / null mean none.
            spec = item.get("taxSpecificAmount")
            if spec not in (None, ""):
                spec = to_decimal(spec, where + ".taxSpecificAmount")
                if spec < 0:
                    raise ApiError("99", f"{where}: negative taxSpecificAmount")
                ts += round2(spec * qty)
        return amounts, ts

    @staticmethod
    def _cur_total(inv, total):
        """Total in the foreign currency when curCode is not CDF and curRate > 0."""
        # CHOICE: CDF invoices may leave the block out or send curRate -1/0/1; all
        # accepted.  curTotal = total / curRate (CDF per unit), else null.
        code = text(inv.get("curCode")).upper()
        if inv.get("curRate") in (None, ""):
            return None
        rate = to_decimal(inv["curRate"], "curRate")
        if code and code != "CDF" and rate > 0:
            return round2(total / rate)
        return None

    def _check_reference(self, inv, itype, total):
        """For FA/EA: the original codeDEFDGI must exist and not be over-credited.

        Caller need not hold the lock; reads of by_code are re-checked at confirm.
        """
        if itype not in CREDIT_NOTES:
            return None
        ref = inv.get("reference")
        if not text(ref):
            raise ApiError("4", "original invoice reference missing")
        if len(ref) != 24:
            raise ApiError("5", "reference must be 24 characters")
        if text(inv.get("referenceType")).upper() not in {t for t, _ in REFERENCE_TYPES}:
            raise ApiError("99", "referenceType must be COR, RAN, RAM or RRR")
        with self.lock:
            self._check_credit(ref, itype, total)
        return ref

    def _check_credit(self, ref, itype, total):
        """Original known, of the matching family, and not exceeded (lock held)."""
        orig = self.by_code.get(ref)
        # CHOICE: FA must credit an FV/FT, EA an EV/ET; otherwise "not found".
        if orig is None or orig["type"] not in CREDIT_NOTES[itype]:
            raise ApiError("11", "original invoice not found")
        if orig["credited"] + total > orig["total"]:
            raise ApiError("12", "credit note exceeds the original invoice")

    def request(self, inv):
        """POST /api/invoice: register a pending request and return the figures."""
        itype, figures, reference = self.compute(inv)
        with self.lock:
            self._purge()
            if len(self.pending) >= self.pending_limit:
                raise ApiError("1", "too many pending requests")
            uid = str(uuid.uuid4())
            self.pending[uid] = {"mono": time.monotonic(), "created": datetime.now(KINSHASA),
                                 "rn": text(inv.get("rn")), "type": itype,
                                 "total": figures["total"], "vtotal": figures["vtotal"],
                                 "reference": reference}
        return dict(uid=uid, **figures, errorCode=None, errorDesc=None)

    # ----- confirm / cancel ---------------------------------------------
    def confirm(self, uid, body):
        """PUT .../confirm: check the echoed totals, finalize, return security elements.

        Returns (answer, drop) where drop says the answer must be lost.
        """
        if not isinstance(body, dict) or "total" not in body or "vtotal" not in body:
            raise ApiError("99", "confirm body must carry total and vtotal")
        total = to_decimal(body["total"], "total")
        vtotal = to_decimal(body["vtotal"], "vtotal")
        with self.lock:
            self._purge()
            req = self.pending.get(uid)
            if req is None:
                raise ApiError("20", "invoice missing or already finalized/cancelled")
            # CHOICE: no tolerance; numeric equality (1160 == 1160.00).
            if total != req["total"] or vtotal != req["vtotal"]:
                raise ApiError("99", "total/vtotal differ from the calculation")
            if req["reference"] is not None:
                self._check_credit(req["reference"], req["type"], req["total"])
            del self.pending[uid]
            self.type_counters[req["type"]] += 1
            self.total_counter += 1
            now = datetime.now(KINSHASA)
            code = self._make_code(uid, now)
            counters = f"{self.type_counters[req['type']]}/{self.total_counter} {req['type']}"
            self.by_code[code] = {"type": req["type"], "total": req["total"],
                                  "credited": Decimal("0.00")}
            if req["reference"] is not None:
                self.by_code[req["reference"]]["credited"] += req["total"]
            self.finalized.append({"uid": uid, "rn": req["rn"], "codeDEFDGI": code,
                                   "counters": counters, "type": req["type"],
                                   "total": req["total"]})
            drop, self.drop_next = self.drop_next, False
        answer = {
            # CHOICE: Benin's format, dd/MM/yyyy HH:mm:ss, Kinshasa time.
            "dateTime": now.strftime("%d/%m/%Y %H:%M:%S"),
            # CHOICE: Benin's layout F;<nim>;<code>;<nif>;<yyyyMMddHHmmss>.
            "qrCode": f"F;{self.nim};{code};{self.nif};{now.strftime('%Y%m%d%H%M%S')}",
            "codeDEFDGI": code, "counters": counters, "nim": self.nim,
            "errorCode": None, "errorDesc": None}
        return answer, drop

    def _make_code(self, uid, now):
        """24 characters [A-Z2-7], from a hash of nim, uid, time and counter."""
        seed = f"{self.nim}|{uid}|{now.isoformat()}|{self.total_counter}".encode()
        return base64.b32encode(hashlib.sha256(seed).digest()).decode()[:24]

    def cancel(self, uid):
        """PUT .../cancel: drop a pending request."""
        with self.lock:
            self._purge()
            if self.pending.pop(uid, None) is None:
                raise ApiError("20", "invoice missing or already finalized/cancelled")
        # CHOICE: same shape as the confirm answer, only dateTime filled (Benin-like).
        return {"dateTime": datetime.now(KINSHASA).strftime("%d/%m/%Y %H:%M:%S"),
                "qrCode": None, "codeDEFDGI": None, "counters": None, "nim": None,
                "errorCode": None, "errorDesc": None}


class Handler(BaseHTTPRequestHandler):
    """HTTP front end: routing, authentication, JSON in and out."""

    protocol_version = "HTTP/1.1"
    server_version = "edef-sim/" + VERSION
    state = None    # set by main()
    token = None
    info = None     # static data for /api/info/*

    def do_GET(self):
        """Dispatch GET."""
        self.dispatch("GET")

    def do_POST(self):
        """Dispatch POST."""
        self.dispatch("POST")

    def do_PUT(self):
        """Dispatch PUT."""
        self.dispatch("PUT")

    def do_DELETE(self):
        """Dispatch DELETE (always 404/405)."""
        self.dispatch("DELETE")

    def log_message(self, fmt, *args):
        """Log to stderr; the request line never contains the token."""
        sys.stderr.write("%s [%s] %s\n" % (self.address_string(),
                                           self.log_date_time_string(), fmt % args))

    # ----- plumbing --------------------------------------------------------
    def send_json(self, status, obj):
        """Write a JSON answer with Content-Length."""
        data = dumps(obj).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_body(self):
        """Read the request body (Content-Length or chunked)."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = b""
            while True:
                try:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                except ValueError:
                    raise ApiError("99", "bad chunked body") from None
                if size == 0:
                    while self.rfile.readline().strip():
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
                if len(data) > MAX_BODY:
                    raise ApiError("99", "body too large")
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise ApiError("99", "bad Content-Length") from None
        if length > MAX_BODY:
            raise ApiError("99", "body too large")
        return self.rfile.read(length) if length > 0 else b""

    def read_json(self, required=True):
        """Parse the body as JSON with exact decimals; None if empty and optional."""
        raw = self.read_body()
        if not raw.strip():
            if required:
                raise ApiError("99", "JSON body required")
            return None
        try:
            return json.loads(raw.decode("utf-8"), parse_float=Decimal,
                              parse_constant=reject_constant)
        except (ValueError, UnicodeDecodeError):
            raise ApiError("99", "malformed JSON") from None

    def authorized(self):
        """Bearer token check; a bare token is accepted too (one integrator saw it)."""
        value = self.headers.get("Authorization", "").strip()
        if value[:7].lower() == "bearer ":
            value = value[7:].strip()
        return value == self.token

    # ----- routing -----------------------------------------------------------
    def dispatch(self, method):
        """Route one request; business errors become HTTP 400 {errorCode, errorDesc}."""
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        try:
            if path.startswith("/_control/"):
                self.control(method, path)
            elif path.lower().startswith("/api/"):
                if not self.authorized():
                    self.read_body()
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", "Bearer")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.api(method, path)
            else:
                self.send_json(404, {"title": "Not Found", "status": 404})
        except ApiError as err:
            self.send_json(400, {"errorCode": err.code, "errorDesc": err.desc})

    def api(self, method, path):
        """The e-MCF endpoints (paths case-insensitive, as ASP.NET routing is)."""
        parts = path.split("/")[2:]       # after "/api"
        low = [p.lower() for p in parts]
        if low == ["invoice"]:
            if method == "GET":
                return self.send_json(200, self.state.header())
            if method == "POST":
                return self.send_json(200, self.state.request(self.read_json()))
            return self.not_allowed()
        if len(low) == 3 and low[0] == "invoice" and low[2] in ("confirm", "cancel"):
            # CHOICE: PUT only (four integrations out of five use PUT).
            if method != "PUT":
                return self.not_allowed()
            if low[2] == "cancel":
                self.read_body()
                return self.send_json(200, self.state.cancel(parts[1]))
            answer, drop = self.state.confirm(parts[1], self.read_json())
            if drop:
                self.log_message('"%s" finalized, answer dropped', self.requestline)
                self.close_connection = True   # socket closed with no response at all
                return None
            return self.send_json(200, answer)
        if len(low) == 2 and low[0] == "info" and method == "GET":
            if low[1] == "status":
                return self.send_json(200, dict(self.state.header(), emcfList=self.info["emcf"]))
            if low[1] == "taxgroups":
                return self.send_json(200, {g.lower(): r for g, r in self.state.rates.items()})
            if low[1] in self.info:
                return self.send_json(200, self.info[low[1]])
        return self.send_json(404, {"title": "Not Found", "status": 404})

    def not_allowed(self):
        """HTTP 405."""
        self.send_json(405, {"title": "Method Not Allowed", "status": 405})

    def control(self, method, path):
        """Test-control endpoints (no token)."""
        if path == "/_control/drop_next_confirm_answer" and method == "POST":
            self.read_body()
            self.state.arm_drop()
            return self.send_json(200, {"ok": True})
        if path == "/_control/finalized" and method == "GET":
            return self.send_json(200, self.state.finalized_list())
        if path == "/_control/pending" and method == "GET":
            return self.send_json(200, self.state.pending_uids())
        return self.send_json(404, {"title": "Not Found", "status": 404})


def parse_rates(spec):
    """Build the A..P rate table from the defaults and an optional "b=16,c=8" override."""
    rates = {g: Decimal(DEFAULT_RATES.get(g, 0)) for g in GROUPS}
    for pair in filter(None, (spec or "").split(",")):
        key, _, value = pair.partition("=")
        if key.strip().upper() not in rates:
            raise SystemExit(f"bad --tax-rates entry {pair!r}")
        rates[key.strip().upper()] = Decimal(value.strip())
    return rates


def static_info(nim):
    """Reference lists served under /api/info/* (keys are lowercased path names)."""
    pairs = lambda rows: [{"type": t, "description": d} for t, d in rows]
    today = datetime.now(KINSHASA).replace(microsecond=0)
    return {
        "invoicetypes": pairs(INVOICE_TYPES), "paymenttypes": pairs(PAYMENT_TYPES),
        "clienttypes": pairs(CLIENT_TYPES), "referencetypes": pairs(REFERENCE_TYPES),
        "itemtypes": pairs(ITEM_TYPES),
        # CHOICE: one fixed illustrative USD rate (CDF per USD).
        "currencyrates": [{"type": "USD", "description": "Dollar américain",
                           "date": iso(today), "rate": Decimal("2850.00")}],
        "emcf": [{"nim": nim, "status": "ACTIVE", "shopName": "Simulated shop",
                  "address1": "Kinshasa", "address2": None, "address3": None,
                  "contact1": None, "contact2": None, "contact3": None}],
    }


def main():
    """Parse the command line, start the server, print the listening line."""
    ap = argparse.ArgumentParser(description="DGI e-MCF web API (e-DEF) simulator")
    ap.add_argument("--listen", default="127.0.0.1:0", help="HOST:PORT (port 0 = any)")
    ap.add_argument("--token", required=True)
    ap.add_argument("--nif", required=True)
    ap.add_argument("--nim", required=True)
    ap.add_argument("--pending-limit", type=int, default=10)
    ap.add_argument("--expiry-secs", type=float, default=120)
    ap.add_argument("--tax-rates", default="", help='overrides, e.g. "c=8,g=8"')
    ap.add_argument("--token-valid-days", type=float, default=30)
    args = ap.parse_args()
    host, _, port = args.listen.rpartition(":")
    valid = datetime.now(KINSHASA).replace(microsecond=0) + timedelta(days=args.token_valid_days)
    Handler.state = EmcfState(args.nif, args.nim, parse_rates(args.tax_rates),
                              args.pending_limit, args.expiry_secs, valid)
    Handler.token = args.token
    Handler.info = static_info(args.nim)
    server = ThreadingHTTPServer((host or "127.0.0.1", int(port)), Handler)
    server.daemon_threads = True
    print(f"listening on http://{server.server_address[0]}:{server.server_address[1]}",
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
