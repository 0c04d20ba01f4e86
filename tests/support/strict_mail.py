"""Reads one e-mail (the bytes an SMTP server received) on stdin and checks it as a strict
mail client would: Python's `email` package with `policy=email.policy.strict` (RFC 5322 and
MIME; any defect it finds is an error), then the rules that package leaves to the reader:
CRLF line ends, no line over 998 octets, 7-bit headers (RFC 2047 encoded words for what is not
ASCII) without control characters, no encoded word over 75 characters (RFC 2047 section 2), no
control character in a decoded header (an encoded word that decodes to CR LF would show a
forged line, or a forged header to a client that re-folds it), each required header exactly
once, a parsable Date and Message-ID. Prints what a
client shows, as JSON: the decoded headers, the raw Subject, and the decoded text of each
part. Exits 1 with the reason on stderr when the message is not right.

Used by tests/operations/alerts.rs (tests/support/smtp.rs `Received::strict`)."""

import email
import email.policy
import json
import re
import sys

REQUIRED = ["Date", "From", "To", "Subject", "Message-ID", "MIME-Version"]

# An RFC 2047 encoded word: =?charset?encoding?encoded-text?= (no white space inside).
ENCODED_WORD = re.compile(rb"=\?[^?\s]+\?[bBqQ]\?[^?\s]*\?=")
MAX_ENCODED_WORD = 75


def control_in(text):
    """The first control character of `text` (C0 but TAB, DEL, C1), or None."""
    for index, char in enumerate(text):
        code = ord(char)
        if (code < 0x20 and char != "\t") or 0x7F <= code <= 0x9F:
            return index, code
    return None


def fail(reason):
    sys.stderr.write(reason + "\n")
    sys.exit(1)


def main():
    raw = sys.stdin.buffer.read()
    head, sep, _ = raw.partition(b"\r\n\r\n")
    if not sep:
        fail("no empty line (CRLF CRLF) between the headers and the body")
    for number, line in enumerate(raw.split(b"\r\n"), 1):
        if b"\n" in line or b"\r" in line:
            fail(f"line {number}: a bare CR or LF (lines end with CRLF)")
        if len(line) > 998:
            fail(f"line {number}: {len(line)} octets (998 at most)")
    try:
        head_text = head.decode("ascii")
    except UnicodeDecodeError:
        fail("8-bit octets in the headers (non-ASCII text must be RFC 2047 encoded words)")
    for number, line in enumerate(head_text.split("\r\n"), 1):
        found = control_in(line)
        if found:
            fail(f"header line {number}: control character U+{found[1]:04X} at {found[0] + 1}")
    for word in ENCODED_WORD.finditer(head):
        if len(word.group()) > MAX_ENCODED_WORD:
            fail(
                f"encoded word of {len(word.group())} characters "
                f"({MAX_ENCODED_WORD} at most, RFC 2047 section 2): {word.group().decode()}"
            )

    try:
        message = email.message_from_bytes(raw, policy=email.policy.strict)
    except Exception as error:  # the strict policy raises on the first defect
        fail(f"strict parse: {type(error).__name__}: {error}")

    headers = {}
    for name in message.keys():
        headers.setdefault(name.lower(), []).append(name)
    for name in REQUIRED:
        count = len(message.get_all(name, []))
        if count != 1:
            fail(f"{name}: {count} times (exactly once)")
    shown = {}
    for name, value in message.items():
        if value.defects:
            fail(f"{name}: {value.defects}")
        found = control_in(str(value))
        if found:
            fail(
                f"{name}: decodes to control character U+{found[1]:04X} at {found[0] + 1}: "
                f"{str(value)!r}"
            )
        shown.setdefault(name.lower(), str(value))

    date = message["Date"].datetime
    if date is None or date.tzinfo is None:
        fail(f"Date {message['Date']!r} has no zone")
    message_id = str(message["Message-ID"]).strip()
    if not (message_id.startswith("<") and message_id.endswith(">") and "@" in message_id):
        fail(f"Message-ID {message_id!r} is not <left@right>")

    parts = []
    for part in message.walk():
        if part.defects:
            fail(f"part {part.get_content_type()}: {part.defects}")
        if part.is_multipart():
            continue
        parts.append(
            {
                "type": part.get_content_type(),
                "charset": part.get_content_charset(),
                "encoding": part.get("Content-Transfer-Encoding", "7bit").lower(),
                # MIME text breaks its lines with CRLF; a client shows each as a line break.
                "text": part.get_content().replace("\r\n", "\n"),
            }
        )

    raw_subject = ""
    for line in head.decode("ascii").split("\r\n"):
        if line.lower().startswith("subject:"):
            raw_subject = line[len("subject:"):].strip()
        elif raw_subject and line[:1] in (" ", "\t"):
            raw_subject += " " + line.strip()
        elif raw_subject:
            break
    print(
        json.dumps(
            {
                "headers": shown,
                "raw_subject": raw_subject,
                "date_unix": date.timestamp(),
                "from": [a.addr_spec for a in message["From"].addresses],
                "to": [a.addr_spec for a in message["To"].addresses],
                "message_id": message_id,
                "parts": parts,
            }
        )
    )


main()
