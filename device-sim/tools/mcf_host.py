#!/usr/bin/env python3
"""mcf_host.py: an independent MCF-SFE host, written from protocols/mcf-sfe/PROTOCOL.md alone.

Python 3.11, standard library only. It opens a serial device (or the pty slave printed by
`emcf-sim --pty`), puts it in raw mode 115200 8N1 and speaks MCF-SFE.

    python3 mcf_host.py state    PATH   # C1h: identity, counters, last invoice, rates
    python3 mcf_host.py demo     PATH   # one whole FV invoice, then its security elements
    python3 mcf_host.py selftest PATH   # acceptance checks, one line each

`PATH state` (path first) is accepted too. Exit codes: 0 ok, 1 a check or the operation failed,
2 usage or port error.
"""

import argparse
import base64
import fcntl
import hashlib
import os
import select
import string
import sys
import termios
import time
from decimal import ROUND_HALF_UP, Decimal
from typing import NamedTuple

SOH, ETX, SEP, ENQ, NAK, SYN = 0x01, 0x03, 0x04, 0x05, 0x15, 0x16
SEQ_FIRST, SEQ_LAST = 0x20, 0xFF
CMD_C1, CMD_C2, CMD_C3, CMD_C0 = 0xC1, 0xC2, 0xC3, 0xC0
CMD_ITEM, CMD_COMMENT, CMD_SUBTOTAL, CMD_PAY, CMD_FINAL = 0x31, 0x36, 0x33, 0x35, 0x38
WINDOW_S, TRIES = 0.5, 3                       # PROTOCOL.md §3.3 defaults
BUDGET_S, SALE_FINAL_S, CREDIT_FINAL_S, POLL_S = 5.0, 15.0, 90.0, 0.5
MAX_REQUEST_DATA = 219
GROUPS = "ABCDEFGHIJKLMNOP"
SALE_TYPES, CREDIT_TYPES = ("FV", "FT", "EV", "ET"), ("FA", "EA")
DEMO_KEY = "emcf-sim-demo-key"
CENT = Decimal("0.01")
EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
STATUS_FLAGS = {  # name -> (byte, bit), PROTOCOL.md §9 (simulator map)
    "SyntaxError": (0, 0), "CommandRefused": (0, 1), "ClockError": (0, 2),
    "InvoiceOpen": (1, 0), "ClientSet": (1, 1), "FinalizePending": (1, 2),
    "FiscalMemoryNearlyFull": (2, 0), "FiscalMemoryFull": (2, 1), "DgiLinkOverdue": (3, 0),
}
ESCAPES = {"&": "^amp;", ",": "^x2c;", "<": "^lt;", ">": "^gt;", "\r": "^xd;", "\n": "^xa;", "^": "^x5e;"}


class LinkError(Exception):
    """The device did not answer in time, or the port failed."""


class PortClosed(LinkError):
    """The port itself is gone (read error or end of stream)."""


class ProtocolError(Exception):
    """A reply that does not have the documented form."""


class Refused(Exception):
    """The device answered `E:`; the text is for display only."""


class Reply(NamedTuple):
    """One decoded device frame."""
    seq: int
    cmd: int
    data: bytes
    status: bytes
    raw: bytes

    @property
    def text(self) -> str:
        """DATA as text (not unescaped)."""
        return self.data.decode("utf-8", errors="replace")

    def flag(self, name: str) -> bool:
        """True when the named status flag of §9 is set."""
        byte, bit = STATUS_FLAGS[name]
        return bool(self.status[byte] & (1 << bit))

    def flags(self) -> list:
        """Names of every set status flag."""
        return [name for name in STATUS_FLAGS if self.flag(name)]


# ---------------------------------------------------------------- frames (§2)

def bcc(body: bytes) -> bytes:
    """16-bit wrapping sum of body as 4 nibbles, most significant first, each + 0x30."""
    total = sum(body) & 0xFFFF
    return bytes(0x30 + ((total >> shift) & 0xF) for shift in (12, 8, 4, 0))


def encode_request(seq: int, cmd: int, data: bytes) -> bytes:
    """Build a host -> device frame: 01 LEN SEQ CMD DATA 05 BCC 03."""
    if len(data) > MAX_REQUEST_DATA:
        raise ValueError(f"DATA of {len(data)} bytes exceeds {MAX_REQUEST_DATA}")
    body = bytes([0x20 + 4 + len(data), seq, cmd]) + data + bytes([ENQ])
    return bytes([SOH]) + body + bcc(body) + bytes([ETX])


def pop_event(buf: bytearray, flush: bool = False):
    """Take the next event from a device -> host byte buffer (resync rule of §2.3).

    Returns "NAK", "SYN", ("bad", reason), a Reply, or None when more bytes are needed. With
    flush=True an incomplete frame at the head is treated as noise: its SOH is dropped.
    """
    while buf:
        if buf[0] != SOH:
            byte = buf.pop(0)
            if byte in (NAK, SYN):
                return "NAK" if byte == NAK else "SYN"
            continue
        n = buf[1] - 0x20 if len(buf) > 1 else 11
        if n < 11:
            del buf[0]
            return ("bad", "length")
        total = 1 + n + 5
        if len(buf) < total:
            if not flush:
                return None
            del buf[0]
            continue
        frame = bytes(buf[:total])
        if frame[n] != ENQ or frame[-1] != ETX or frame[n - 7] != SEP:
            del buf[0]
            return ("bad", "structure")
        del buf[:total]
        if frame[n + 1:n + 5] != bcc(frame[1:n + 1]):
            return ("bad", "checksum")
        if frame[2] < 0x20:
            return ("bad", "seq")
        return Reply(frame[2], frame[3], frame[4:n - 7], frame[n - 6:n], frame)
    return None


# ---------------------------------------------------------------- DATA (§4)

def escape(text: str) -> str:
    """Escape one text field; refuse control characters other than CR and LF."""
    out = []
    for ch in text:
        if ch in ESCAPES:
            out.append(ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            raise ValueError(f"control character {ord(ch):#04x} not allowed in {text!r}")
        else:
            out.append(ch)
    return "".join(out)


def unescape(field: str) -> str:
    """Decode ^amp; ^lt; ^gt; and ^x<1..6 hex>; (a valid code point); keep any other ^... as is."""
    named = {"amp": "&", "lt": "<", "gt": ">"}
    out, i = [], 0
    while i < len(field):
        end = field.find(";", i + 1) if field[i] == "^" else -1
        name = field[i + 1:end] if end > 0 else ""
        if name in named:
            out.append(named[name])
        elif name[:1] == "x" and 1 <= len(name) - 1 <= 6 and all(c in string.hexdigits for c in name[1:]) \
                and (int(name[1:], 16) < 0xD800 or 0xE000 <= int(name[1:], 16) <= 0x10FFFF):
            out.append(chr(int(name[1:], 16)))
        else:
            out.append(field[i])
            i += 1
            continue
        i = end + 1
    return "".join(out)


def split_fields(text: str) -> list:
    """Split reply DATA on raw commas and unescape each field."""
    return [unescape(f) for f in text.split(",")]


def money(value) -> str:
    """Amount with exactly 2 decimals."""
    return str(Decimal(value).quantize(CENT))


def round2(value: Decimal) -> Decimal:
    """Round half away from zero to 2 places (§8)."""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def qty_text(qty: Decimal) -> str:
    """Quantity in the §4.2 form: <= 3 decimals, trailing zeros dropped."""
    if qty <= 0 or qty != qty.quantize(Decimal("0.001")):
        raise ValueError(f"bad quantity {qty}")
    return format(qty.quantize(Decimal("0.001")), "f").rstrip("0").rstrip(".")


# ---------------------------------------------------------------- port and link (§1, §3)

def open_port(path: str) -> int:
    """Open the serial device and set raw 115200 8N1, no flow control (cfmakeraw)."""
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    try:
        attrs = termios.tcgetattr(fd)
        attrs[0] &= ~(termios.IGNBRK | termios.BRKINT | termios.PARMRK | termios.ISTRIP | termios.INLCR
                      | termios.IGNCR | termios.ICRNL | termios.IXON | termios.IXOFF | termios.IXANY)
        attrs[1] &= ~termios.OPOST
        attrs[2] &= ~(termios.CSIZE | termios.PARENB | termios.CSTOPB | getattr(termios, "CRTSCTS", 0))
        attrs[2] |= termios.CS8 | termios.CREAD | termios.CLOCAL
        attrs[3] &= ~(termios.ECHO | termios.ECHONL | termios.ICANON | termios.ISIG | termios.IEXTEN)
        attrs[4] = attrs[5] = termios.B115200
        attrs[6][termios.VMIN], attrs[6][termios.VTIME] = 1, 0
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except (termios.error, OSError):
        os.close(fd)
        raise
    return fd


class Host:
    """One open port: SEQ counter, receive buffer and the §3.3 retry algorithm."""

    def __init__(self, fd: int, verbose: bool = False):
        self.fd, self.verbose = fd, verbose
        self.seq = SEQ_FIRST - 1
        self.buf = bytearray()

    def log(self, text: str) -> None:
        """Trace one line on stderr with -v."""
        if self.verbose:
            print(f"  [{time.monotonic():.3f}] {text}", file=sys.stderr)

    def next_seq(self) -> int:
        """SEQ for a new command: 0x20..0xFF, then wraps to 0x20 (§3.1)."""
        self.seq = SEQ_FIRST if self.seq >= SEQ_LAST else self.seq + 1
        return self.seq

    def write(self, frame: bytes) -> None:
        """Write a whole frame."""
        self.log(f"> {frame.hex(' ')}")
        view = memoryview(frame)
        while view:
            view = view[os.write(self.fd, view):]

    def _fill(self, timeout: float) -> bool:
        """Read what arrives within timeout into the buffer; False when nothing came."""
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not ready:
            return False
        try:
            chunk = os.read(self.fd, 4096)
        except OSError as err:
            raise PortClosed(f"port read failed: {err}") from err
        if not chunk:
            raise PortClosed("port closed (read returned 0 bytes)")
        self.buf += chunk
        return True

    def discard_input(self) -> None:
        """Drop stale input (start of every command)."""
        while self._fill(0):
            pass
        if self.buf:
            self.log(f"discard {self.buf.hex(' ')}")
        self.buf.clear()

    def next_event(self, deadline: float):
        """Next decoded event before deadline, or None. At the deadline a stuck partial frame is
        flushed (its SOH treated as noise) so that a frame behind it can still be found."""
        while True:
            event = pop_event(self.buf)
            if event is not None:
                self.log(f"< {event if not isinstance(event, Reply) else event.raw.hex(' ')}")
                return event
            if not self._fill(deadline - time.monotonic()):
                event = pop_event(self.buf, flush=True)
                if event is not None:
                    self.log(f"< (flushed) {event}")
                return event

    def transact(self, frame: bytes, seq: int, cmd: int, budget: float = BUDGET_S,
                 listen_after: bool = False):
        """Run the §3.3 algorithm for one frame. Returns (reply, transmissions); reply is None
        when nothing valid came (only with listen_after, i.e. 38h with totals)."""
        end = time.monotonic() + budget
        self.discard_input()
        sent = 0
        while sent < TRIES and time.monotonic() < end:
            self.write(frame)
            sent += 1
            window_end = min(time.monotonic() + WINDOW_S, end)
            while True:
                event = self.next_event(window_end)
                if event is None or event == "NAK":
                    break
                if event == "SYN":
                    window_end = min(time.monotonic() + WINDOW_S, end)
                elif isinstance(event, Reply) and event.seq == seq and event.cmd == cmd:
                    return event, sent
        if not listen_after:
            raise LinkError(f"no reply to {cmd:02X}h (SEQ {seq:02X}h) after {sent} transmissions")
        while time.monotonic() < end:
            event = self.next_event(end)
            if isinstance(event, Reply) and event.seq == seq and event.cmd == cmd:
                return event, sent
        return None, sent

    def command(self, cmd: int, data: str = "", budget: float = BUDGET_S, allow_refusal: bool = False):
        """Send a new command (new SEQ) and return its Reply. An `E:` reply raises Refused
        unless allow_refusal."""
        seq = self.next_seq()
        reply, _ = self.transact(encode_request(seq, cmd, data.encode("utf-8")), seq, cmd, budget)
        if reply.text.startswith("E:") and not allow_refusal:
            raise Refused(f"{cmd:02X}h refused: {unescape(reply.text)}")
        return reply

    def throwaway(self) -> None:
        """The §3.2 restart rule: one harmless C2h right after opening, reply ignored."""
        try:
            self.command(CMD_C2, allow_refusal=True)
        except LinkError as err:
            raise LinkError(f"device does not answer the first C2h: {err}") from err


# ---------------------------------------------------------------- replies and invoice pieces

def read_state(host: Host) -> dict:
    """Send C1h and parse its 30 fields (§5.1); keeps the Reply under 'reply'."""
    reply = host.command(CMD_C1)
    f = split_fields(reply.text)
    if len(f) != 30:
        raise ProtocolError(f"C1h reply has {len(f)} fields, expected 30: {reply.text!r}")
    return {
        "MID": f[0], "NIF": f[1], "DT": f[2], "TC": int(f[3]), "FVC": int(f[4]), "FRC": int(f[5]),
        "lastDT": f[6], "lastType": f[7], "lastDEF": f[8], "lastFN": f[9], "lastAmount": f[10],
        "rates": {g: (Decimal(r) if r else None) for g, r in zip(GROUPS, f[11:27])},
        "cur": f[27:30], "reply": reply,
    }


def parse_subtotal(text: str) -> dict:
    """Parse the 35 fields of a 33h reply (§5.8)."""
    f = split_fields(text)
    if len(f) != 35:
        raise ProtocolError(f"33h reply has {len(f)} fields, expected 35: {text!r}")
    return {"MV": Decimal(f[0]), "MVg": dict(zip(GROUPS, map(Decimal, f[1:17]))),
            "MTg": dict(zip(GROUPS, map(Decimal, f[17:33]))), "MTS": Decimal(f[33]), "MCUR": f[34]}


def parse_final(text: str) -> dict:
    """Parse a certified 38h reply in any of the four §5.10 forms."""
    body = text[2:] if text.startswith("R:") else text
    f = split_fields(body)
    if len(f) == 7:
        f.insert(6, "")
    if len(f) != 8 or not f[7]:
        raise ProtocolError(f"malformed 38h reply: {text!r}")
    keys = ("FC", "TC", "FT", "DT", "MID", "NIF", "FN", "SIG")
    out = dict(zip(keys, f))
    out["FC"], out["TC"] = int(out["FC"]), int(out["TC"])
    return out


def item_line(name: str, group: str, rate, price: str, qty: str = "1", code: str = "",
              itype: str = "BIE", tax: str = "") -> tuple:
    """Build 31h DATA (§5.6). Returns (data, (group, line amount MON, specific tax amount))."""
    price_d, qty_d = Decimal(price), Decimal(qty)
    mon = round2(price_d * qty_d)
    part1 = escape(name) + ("\n" + escape(code) if code else "")
    part3 = money(price_d) + ("" if qty_d == 1 else "*" + qty_text(qty_d))
    if tax:
        part3 += ";T," + money(tax)
    rate_text = money(rate if rate is not None else 0)
    data = f"{part1}\t{itype},{group}{rate_text}%{money(mon)}\t{part3}"
    return data, (group, mon, Decimal(tax or 0))


def expected_totals(lines: list, rates: dict, mode: str) -> dict:
    """Compute the §8 totals from (group, MON, specific tax) tuples and the C1h rates."""
    mvg = dict.fromkeys(GROUPS, Decimal("0.00"))
    mtg = dict.fromkeys(GROUPS, Decimal("0.00"))
    mts = Decimal("0.00")
    base = dict.fromkeys(GROUPS, Decimal(0))
    for group, mon, tax in lines:
        base[group] += mon
        mts += tax
    for g in GROUPS:
        rate = rates[g] or Decimal(0)
        if mode == "ht":
            mtg[g] = round2(base[g] * rate / 100)
            mvg[g] = base[g] + mtg[g]
        else:
            mtg[g] = round2(base[g] * rate / (100 + rate))
            mvg[g] = base[g]
    return {"MV": sum(mvg.values()) + mts, "MVg": mvg, "MTg": mtg, "MTS": mts, "MCUR": ""}


def signature(key: str, mid: str, tc: int, ft: str, fn: str, mv, mt, dt: str) -> str:
    """Simulator signature (§6.2): base32(SHA-256(key|MID|TC|FT|FN|MV|MT|DT))[:24]."""
    text = f"{key}|{mid}|{tc}|{ft}|{fn}|{money(mv)}|{money(mt)}|{dt}"
    return base64.b32encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()[:24]


def elements(mid: str, nif: str, sig: str, dt: str, fc: int, tc: int, ft: str) -> dict:
    """Security elements of §6.1."""
    return {"codeDEFDGI": sig, "nim": mid, "counters": f"{fc}/{tc} {ft}", "dateTime": dt,
            "qrCode": f"RDCDEF01;{mid};{sig};{nif};{dt}"}


def cancel(host: Host, quiet: bool = True) -> Reply:
    """38h C; with quiet, an `E:` (e.g. no open invoice) is accepted and returned."""
    return host.command(CMD_FINAL, "C", allow_refusal=quiet)


def reconcile(host: Host, rn: str):
    """§6.3: after an unknown outcome, decide from C1h. Returns elements or None (abandoned)."""
    st = read_state(host)
    if st["lastFN"] == rn and st["lastDEF"]:
        fc = st["FRC"] if st["lastType"] in CREDIT_TYPES else st["FVC"]
        return elements(st["MID"], st["NIF"], st["lastDEF"], st["lastDT"], fc, st["TC"], st["lastType"])
    cancel(host)
    return None


def finalize(host: Host, mv, mt, ftype: str, rn: str) -> dict:
    """38h with totals, `P:` polling with a new SEQ (§3.4); returns the parsed R: fields,
    or {'reconciled': elements-or-None} when the outcome had to be read back from C1h."""
    end = time.monotonic() + (CREDIT_FINAL_S if ftype in CREDIT_TYPES else SALE_FINAL_S)
    data, polled = f"{money(mv)},{money(mt)}".encode(), False
    while time.monotonic() < end:
        seq = host.next_seq()
        try:
            reply, sent = host.transact(encode_request(seq, CMD_FINAL, data), seq, CMD_FINAL,
                                        end - time.monotonic(), listen_after=True)
        except PortClosed as err:
            raise PortClosed(f"{err} during 38h: outcome of FN {rn!r} UNKNOWN; when the device "
                             "is back, read its state (C1h) and compare lastFN (§6.3)") from err
        if reply is None or not reply.data:
            break                                   # silence or empty reply: unknown outcome
        if reply.text.startswith("P:"):
            polled = True
            host.log(f"pending: {unescape(reply.text[2:])}")
            time.sleep(POLL_S)
            continue
        if reply.text.startswith("E:"):
            if polled or sent > 1:                  # an earlier 38h may have committed
                break
            raise Refused(f"38h refused: {unescape(reply.text)}")
        return parse_final(reply.text)
    return {"reconciled": reconcile(host, rn)}


def open_invoice(host: Host, nif: str, ftype: str, mode: str, rn: str, ref: str = "") -> Reply:
    """C0h (§5.5); for FA/EA ref is the original codeDEFDGI (reference type COR)."""
    fields = ["1", "Caisse 1", nif, ftype] + (["COR", ref] if ftype in CREDIT_TYPES else [])
    fields += [mode, "ISF01", rn]
    return host.command(CMD_C0, ",".join(escape(f) for f in fields))


def unique_rn(prefix: str) -> str:
    """A time-based FN, unique per run, well within 24 printable ASCII bytes."""
    return f"{prefix}-{time.time_ns() // 1_000_000:x}"[:24]


def pick_groups(rates: dict) -> tuple:
    """Two groups with a VAT rate, preferably with different rates."""
    taxed = [g for g in GROUPS if rates[g]]
    if not taxed:
        raise ProtocolError("the device reports no taxed group")
    other = [g for g in taxed if rates[g] != rates[taxed[0]]] or taxed[1:] or [g for g in GROUPS if g != taxed[0]]
    return taxed[0], other[0]


def run_invoice(host: Host, st: dict, ftype: str, mode: str, rn: str, ref: str = "") -> tuple:
    """C3h C0h 31h x3 36h 33h 35h 38h. Returns (expected totals, device 33h, 38h result)."""
    g1, g2 = pick_groups(st["rates"])
    rates = st["rates"]
    if ftype in SALE_TYPES:
        host.command(CMD_C3, ",".join(escape(f) for f in (
            "PM", "A7654321C", "Societe Exemple SARL", "12, av. de la Paix, Gombe",
            "+243810000000", "compta@exemple.cd", "CD/KIN/RCCM/12-B-3456")))
    open_invoice(host, st["NIF"], ftype, mode, rn, ref)
    items = [item_line("Café, noir & <fort>", g1, rates[g1], "1999.99", "0.125", code="LR 1515"),
             item_line("STYLO BIC", g2, rates[g2], "600.00", "2", code="LR 1516"),
             item_line("Timbre", g1, rates[g1], "25.00", "10", itype="SER", tax="10.00")]
    lines = []
    for data, line in items:
        host.command(CMD_ITEM, data)
        lines.append(line)
    host.command(CMD_COMMENT, "A," + escape("Merci, a bientot"))
    subtotal = parse_subtotal(host.command(CMD_SUBTOTAL).text)
    host.command(CMD_PAY, "E" + money(subtotal["MV"]))
    mt = sum(subtotal["MTg"].values())
    return expected_totals(lines, rates, mode), subtotal, finalize(host, subtotal["MV"], mt, ftype, rn)


# ---------------------------------------------------------------- subcommands

def cmd_state(host: Host, args) -> int:
    """Print the C1h state readably."""
    st = read_state(host)
    print(f"MID (nim)      {st['MID']}\nNIF            {st['NIF']}\nDevice clock   {st['DT']}")
    print(f"Counters       TC {st['TC']}  FVC {st['FVC']}  FRC {st['FRC']}")
    if st["lastDEF"]:
        print(f"Last invoice   {st['lastType']} FN {st['lastFN']!r} at {st['lastDT']}, "
              f"total {st['lastAmount']}, codeDEFDGI {st['lastDEF']}")
    else:
        print("Last invoice   none")
    print("VAT rates      " + "  ".join(f"{g} {r}%" if r is not None else f"{g} -" for g, r in st["rates"].items()))
    print("USD rate       " + (" ".join(st["cur"]) if any(st["cur"]) else "none"))
    print("Status         " + (st["reply"].status.hex(" ") + "  " + " ".join(st["reply"].flags())).rstrip())
    return EXIT_OK


def print_elements(el: dict) -> None:
    """Print security elements one per line."""
    for key in ("codeDEFDGI", "nim", "counters", "dateTime", "qrCode"):
        print(f"{key:11} {el[key]}")


def cmd_demo(host: Host, args) -> int:
    """One whole FV invoice in ht mode; print the security elements."""
    st = read_state(host)
    if st["reply"].flag("InvoiceOpen") or st["reply"].flag("ClientSet"):
        cancel(host)
    rn = unique_rn("DEMO")
    try:
        _, subtotal, result = run_invoice(host, st, "FV", "ht", rn)
    except (Refused, ProtocolError):
        cancel(host)
        raise
    print(f"FN {rn}: MV {money(subtotal['MV'])}, VAT {money(sum(subtotal['MTg'].values()))}")
    if "reconciled" in result:
        if result["reconciled"] is None:
            print("outcome unknown and not certified (C1h): invoice abandoned", file=sys.stderr)
            return EXIT_FAIL
        print_elements(result["reconciled"])
    else:
        print_elements(elements(result["MID"], result["NIF"], result["SIG"], result["DT"],
                                result["FC"], result["TC"], result["FT"]))
    return EXIT_OK


# ---------------------------------------------------------------- selftest

class CheckFailed(Exception):
    """One acceptance check did not hold."""


def expect(condition: bool, problems: list, text: str) -> None:
    """Collect a problem when condition is false."""
    if not condition:
        problems.append(text)


def verdict(problems: list, detail: str) -> str:
    """Raise CheckFailed listing the problems, or return the PASS detail."""
    if problems:
        raise CheckFailed("; ".join(problems))
    return detail


def compare_totals(expected: dict, device: dict, problems: list) -> None:
    """Compare computed §8 totals with the device's 33h, field by field."""
    expect(expected["MV"] == device["MV"], problems, f"MV computed {expected['MV']} device {device['MV']}")
    for g in GROUPS:
        for key, label in (("MVg", "MV"), ("MTg", "MT")):
            expect(expected[key][g] == device[key][g], problems,
                   f"{label}{g} computed {expected[key][g]} device {device[key][g]}")
    expect(expected["MTS"] == device["MTS"], problems, f"MTS computed {expected['MTS']} device {device['MTS']}")
    expect(device["MCUR"] == "", problems, f"MCUR should be empty, device has {device['MCUR']!r}")


def check_certified(host: Host, before: dict, ftype: str, rn: str, subtotal: dict, result: dict,
                    key: str, problems: list) -> dict:
    """The §6.2 checks on R:, the signature recipe, and the C1h read afterwards."""
    if "reconciled" in result:
        raise CheckFailed(f"38h outcome unknown; C1h reconciliation gave {result['reconciled']}")
    credit = ftype in CREDIT_TYPES
    kind = "FRC" if credit else "FVC"
    expect(result["FC"] == before[kind] + 1, problems, f"FC {result['FC']} != {kind} {before[kind]} + 1")
    expect(result["TC"] == before["TC"] + 1, problems, f"TC {result['TC']} != TC {before['TC']} + 1")
    expect(result["FT"] == ftype, problems, f"type {result['FT']} != {ftype}")
    expect(result["NIF"] == before["NIF"], problems, f"NIF {result['NIF']} != {before['NIF']}")
    expect(result["MID"] == before["MID"], problems, f"MID {result['MID']} != {before['MID']}")
    expect(result["FN"] == rn, problems, f"FN {result['FN']!r} != {rn!r}")
    sig = result["SIG"]
    expect(len(sig) == 24 and all(c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567" for c in sig), problems,
           f"signature {sig!r} is not 24 chars of [A-Z2-7]")
    mt = sum(subtotal["MTg"].values())
    mine = signature(key, result["MID"], result["TC"], result["FT"], result["FN"], subtotal["MV"], mt, result["DT"])
    expect(sig == mine, problems, f"signature {sig} != recomputed {mine} (key {key!r})")
    after = read_state(host)
    expect(after["TC"] == before["TC"] + 1, problems, f"C1h TC {after['TC']} after, {before['TC']} before")
    for k in ("FVC", "FRC"):
        want = before[k] + (1 if k == kind else 0)
        expect(after[k] == want, problems, f"C1h {k} {after[k]}, expected {want}")
    last = (after["lastDT"], after["lastType"], after["lastDEF"], after["lastFN"])
    expect(last == (result["DT"], ftype, sig, rn), problems, f"C1h last invoice {last}")
    expect(after["lastAmount"] and Decimal(after["lastAmount"]) == subtotal["MV"], problems,
           f"C1h lastAmount {after['lastAmount']!r} != MV {subtotal['MV']}")
    return after


def check_read_state(host: Host, ctx: dict, key: str) -> str:
    """Check 1: C1h parses; leave no invoice open."""
    st = read_state(host)
    if st["reply"].flag("InvoiceOpen") or st["reply"].flag("ClientSet"):
        cancel(host)
        st = read_state(host)
    if st["reply"].flag("InvoiceOpen"):
        raise CheckFailed(f"an invoice is still open after 38h C: status {st['reply'].status.hex(' ')}")
    ctx["before"] = st
    return f"MID {st['MID']} NIF {st['NIF']} TC {st['TC']} FVC {st['FVC']} FRC {st['FRC']}"


def check_sale(host: Host, ctx: dict, key: str) -> str:
    """Check 2: FV in ttc mode, totals computed here, R: fields, signature, C1h afterwards."""
    before = ctx.get("before") or read_state(host)
    rn, problems = unique_rn("ST"), []
    expected, subtotal, result = run_invoice(host, before, "FV", "ttc", rn)
    compare_totals(expected, subtotal, problems)
    check_certified(host, before, "FV", rn, subtotal, result, key, problems)
    ctx["sale"] = result
    return verdict(problems, f"FN {rn} MV {subtotal['MV']} MT {sum(subtotal['MTg'].values())} "
                             f"counters {result['FC']}/{result['TC']} FV SIG {result['SIG']}")


def check_credit(host: Host, ctx: dict, key: str) -> str:
    """Check 3: FA referring to the check 2 signature, certified, FRC + 1."""
    if "sale" not in ctx:
        raise CheckFailed("skipped: check 2 produced no original invoice")
    before, rn, problems = read_state(host), unique_rn("AV"), []
    expected, subtotal, result = run_invoice(host, before, "FA", "ttc", rn, ref=ctx["sale"]["SIG"])
    compare_totals(expected, subtotal, problems)
    check_certified(host, before, "FA", rn, subtotal, result, key, problems)
    return verdict(problems, f"FN {rn} refers to {ctx['sale']['SIG']}, counters {result['FC']}/{result['TC']} FA")


def start_invoice(host: Host, st: dict, problems: list) -> str:
    """C0h of a throwaway FV invoice; check the InvoiceOpen bit. Returns the first taxed group."""
    reply = open_invoice(host, st["NIF"], "FV", "ttc", unique_rn("TMP"))
    expect(reply.flag("InvoiceOpen"), problems, f"InvoiceOpen not set after C0h: {reply.status.hex(' ')}")
    return pick_groups(st["rates"])[0]


def check_cancel(host: Host, ctx: dict, key: str) -> str:
    """Check 4: 38h C leaves counters unchanged and clears InvoiceOpen."""
    before, problems = read_state(host), []
    group = start_invoice(host, before, problems)
    host.command(CMD_ITEM, item_line("Annule", group, before["rates"][group], "10.00")[0])
    reply = cancel(host, quiet=False)
    expect(reply.data == b"", problems, f"38h C reply DATA {reply.text!r}, expected empty")
    expect(not reply.flag("InvoiceOpen"), problems, f"InvoiceOpen still set: {reply.status.hex(' ')}")
    after = read_state(host)
    expect(not after["reply"].flag("InvoiceOpen"), problems, "C1h still shows InvoiceOpen")
    for k in ("TC", "FVC", "FRC", "lastDEF", "lastFN"):
        expect(after[k] == before[k], problems, f"{k} changed: {before[k]!r} -> {after[k]!r}")
    return verdict(problems, f"empty reply, status {reply.status.hex(' ')}, counters TC {after['TC']} unchanged")


def wait_link_answer(host: Host, seq: int, cmd: int):
    """Wait one 500 ms window (SYN restarts it) for NAK or the reply to (seq, cmd); stale
    replies and bad frames are skipped. Returns "NAK", the Reply, or None."""
    window_end = time.monotonic() + WINDOW_S
    while (event := host.next_event(window_end)) is not None:
        if event == "SYN":
            window_end = time.monotonic() + WINDOW_S
        elif event == "NAK" or (isinstance(event, Reply) and (event.seq, event.cmd) == (seq, cmd)):
            return event
    return None


def check_bad_bcc(host: Host, ctx: dict, key: str) -> str:
    """Check 5: a 31h with a corrupted BCC gets NAK and adds nothing."""
    st, problems = read_state(host), []
    group = start_invoice(host, st, problems)
    rate = st["rates"][group]
    seq = host.next_seq()
    frame = bytearray(encode_request(seq, CMD_ITEM, item_line("Corrompu", group, rate, "100.00")[0].encode()))
    frame[-2] = 0x30 + ((frame[-2] - 0x30 + 1) & 0xF)
    host.discard_input()
    host.write(bytes(frame))
    answer = wait_link_answer(host, seq, CMD_ITEM)
    if answer != "NAK":
        problems.append(f"expected NAK, got {answer.raw.hex(' ') if answer else 'nothing'}")
    host.command(CMD_ITEM, item_line("Valide", group, rate, "50.00")[0])
    mv = parse_subtotal(host.command(CMD_SUBTOTAL).text)["MV"]
    expect(mv == Decimal("50.00"), problems, f"33h MV {mv}, expected 50.00 (corrupt line executed?)")
    cancel(host)
    return verdict(problems, f"NAK received, 33h MV {mv} counts only the valid line")


def check_replay(host: Host, ctx: dict, key: str) -> str:
    """Check 6: the same 31h frame with the same SEQ is answered again, executed once."""
    st, problems = read_state(host), []
    group = start_invoice(host, st, problems)
    seq = host.next_seq()
    frame = encode_request(seq, CMD_ITEM, item_line("Double", group, st["rates"][group], "70.00")[0].encode())
    first, _ = host.transact(frame, seq, CMD_ITEM)
    second, _ = host.transact(frame, seq, CMD_ITEM)
    expect(first.raw == second.raw, problems, f"replay differs: {first.raw.hex(' ')} / {second.raw.hex(' ')}")
    mv = parse_subtotal(host.command(CMD_SUBTOTAL).text)["MV"]
    expect(mv == Decimal("70.00"), problems, f"33h MV {mv}, expected 70.00 (item executed twice?)")
    cancel(host)
    return verdict(problems, f"same reply {second.raw.hex(' ')}, 33h MV {mv}")


def check_order(host: Host, ctx: dict, key: str) -> str:
    """Check 7: 35h before 33h is refused with E: and changes nothing."""
    st, problems = read_state(host), []
    group = start_invoice(host, st, problems)
    host.command(CMD_ITEM, item_line("Ordre", group, st["rates"][group], "30.00")[0])
    reply = host.command(CMD_PAY, "E30.00", allow_refusal=True)
    expect(reply.text.startswith("E:"), problems, f"35h before 33h answered {reply.text!r}")
    expect(reply.flag("CommandRefused"), problems, f"CommandRefused not set: {reply.status.hex(' ')}")
    expect(reply.flag("InvoiceOpen"), problems, "the refusal closed the invoice")
    mv = parse_subtotal(host.command(CMD_SUBTOTAL).text)["MV"]
    expect(mv == Decimal("30.00"), problems, f"33h MV {mv} after the refusal, expected 30.00")
    cancel(host)
    return verdict(problems, f"refused with {unescape(reply.text)!r}, status {reply.status.hex(' ')}")


CHECKS = (
    ("C1h device state", check_read_state),
    ("FV ttc invoice: totals, R: fields, signature, C1h after", check_sale),
    ("FA credit note on that invoice", check_credit),
    ("cancelled invoice (38h C)", check_cancel),
    ("corrupted BCC gets NAK, not executed", check_bad_bcc),
    ("repeated SEQ replayed, not executed twice", check_replay),
    ("35h before 33h refused", check_order),
)


def cmd_selftest(host: Host, args) -> int:
    """Run every check, one line each; exit 0 only if all pass."""
    ctx, failed = {}, 0
    for number, (title, check) in enumerate(CHECKS, 1):
        try:
            print(f"PASS {number} {title}: {check(host, ctx, args.key)}", flush=True)
        except PortClosed as err:
            print(f"FAIL {number} {title}: {err}; remaining checks not run", flush=True)
            return EXIT_USAGE
        except (CheckFailed, Refused, ProtocolError, LinkError, ValueError) as err:
            failed += 1
            print(f"FAIL {number} {title}: {err}", flush=True)
            try:
                cancel(host)
            except (Refused, ProtocolError, LinkError):
                pass
    print(f"{len(CHECKS) - failed}/{len(CHECKS)} checks passed")
    return EXIT_OK if failed == 0 else EXIT_FAIL


# ---------------------------------------------------------------- main

COMMANDS = {"state": cmd_state, "demo": cmd_demo, "selftest": cmd_selftest}


def parse_args(argv: list) -> argparse.Namespace:
    """`COMMAND PATH [options]`; `PATH COMMAND` (README order) is accepted too."""
    if len(argv) >= 2 and argv[0] not in COMMANDS and argv[1] in COMMANDS:
        argv = [argv[1], argv[0]] + argv[2:]
    parser = argparse.ArgumentParser(description="Independent MCF-SFE host (PROTOCOL.md only).")
    parser.add_argument("command", choices=COMMANDS, help="what to do")
    parser.add_argument("path", help="serial device or pty slave, e.g. /dev/pts/7 or /tmp/emcf0")
    parser.add_argument("--key", default=DEMO_KEY, help=f"simulator signing key (default {DEMO_KEY})")
    parser.add_argument("-v", "--verbose", action="store_true", help="trace every frame on stderr")
    return parser.parse_args(argv)


def main(argv: list) -> int:
    """Open the port, send the §3.2 throwaway C2h, run the subcommand."""
    args = parse_args(argv)
    try:
        fd = open_port(args.path)
    except (OSError, termios.error) as err:
        print(f"error: cannot open {args.path} as a serial port: {err}", file=sys.stderr)
        return EXIT_USAGE
    host = Host(fd, args.verbose)
    try:
        host.throwaway()
        return COMMANDS[args.command](host, args)
    except LinkError as err:
        print(f"error: link: {err}", file=sys.stderr)
        return EXIT_USAGE
    except (Refused, ProtocolError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_FAIL
    finally:
        os.close(fd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
