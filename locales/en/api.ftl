# api
# The API's errorDesc other than the invoice body's rules (validation.ftl): src/certify/error.rs,
# src/api. The only texts the gateway passes on untranslated are the device's and the DGI's
# ($text), quoted as their own words. A technical detail (the system's or a library's error, in
# English) never goes into an errorDesc: the service's log gives it, with the answer's
# X-Request-Id; a $detail given to a message below is not shown in it.
# The same ids, with the same variables, in locales/fr and locales/en (src/i18n/catalogue.rs tests).

## Certification (src/certify/error.rs)

err-api-key-missing = missing API key: send the header 'Authorization: Bearer <key>'
err-api-key-invalid = invalid API key
err-api-key-disabled = this API key is disabled
err-duplicate-rn = invoice { $rn } was already certified with different content; a new invoice needs a new rn
err-idempotency-key-reused = this Idempotency-Key was already used with a different request (invoice { $rn }); a new request needs a new key
err-idempotency-key-malformed = the Idempotency-Key header must be 1 to 255 printable ASCII characters, optionally in double quotes
err-in-flight = invoice { $rn } is being certified; retry later to get its result
err-quota-exhausted = the annual invoice quota of this organization is reached ({ $used } of { $quota } in { $year }); ask { -gateway-operator } for the Grow plan or a larger quota
err-device-refused = the e-MCF device refused the invoice, in its own words, quoted as they came: "{ $text }"
err-device-refused-silently = the e-MCF device refused the invoice: no text (an empty reply with the refusal status bit)
err-payments-short = the payments ({ $paid }) do not cover the invoice total computed by the device ({ $total })
err-zero-total = the invoice total is 0: the device needs a positive payment to finalize, so an invoice of free lines only cannot be certified
err-totals-mismatch = the device's { $field } ({ $device }) differs from the gateway's computation ({ $expected }); the invoice was cancelled
err-totals-mismatch-absent = the device's { $field } (not in its 33h reply) differs from the gateway's computation ({ $expected }); the invoice was cancelled
err-totals-mismatch-dgi = the DGI's { $field } ({ $dgi }) differs from the gateway's computation ({ $expected }); the request was cancelled and nothing was certified
err-dgi-refused = the DGI refused the invoice: DGI error { $code }, with this text of the DGI's, quoted as it came: "{ $text }"
err-token-rejected = the DGI web API does not accept this gateway's token for device { $device }: { $reason }; { -gateway-operator } must install a new token (a retry will not help)
err-awaiting-administrator = invoice { $rn }: the DGI's answer to its confirmation was lost and the DGI no longer lists it as pending, so whether it was certified is not known; an administrator must settle it (emcf-gateway intent resolve). Do not send it again under another rn
err-totals-too-large = the invoice's totals are too large for the device's subtotal reply (too many tax groups with large amounts); split the invoice
err-wrong-device = the e-MCF device is personalized for NIF { $device_nif }, not this organization's NIF { $org_nif }; the device binding must be fixed
err-device-not-configured = the organization's device { $device } is not configured on this gateway; { -gateway-operator } must add it to the configuration or bind the organization to a configured device, and, for a box plugged into another replica of the service, send this organization's requests to that replica (a retry will not help)
err-no-sandbox = this gateway runs no sandbox, so a test key (mcf_test_) cannot certify here; use a live key or ask { -gateway-operator } (a retry will not help)
err-device-not-ready = the e-MCF device cannot certify now: { $reason }
err-device-unavailable = the e-MCF device is unavailable: { $reason }
err-queue-full = the e-MCF device is busy (queue full); retry shortly
err-outcome-unknown = the e-MCF device did not confirm invoice { $rn }; the gateway is checking it with the device, retry the same request to get the result
err-register-unavailable = the invoice register is unavailable (the service's log says why); this request was not processed (an invoice certified before keeps its certification), retry later
err-database-unavailable = the register's database (PostgreSQL) does not answer; this request was not processed (an invoice certified before keeps its certification), retry in a few seconds
err-not-found = no certified invoice with rn { $rn }
err-internal = internal error of the gateway; report it with this answer's X-Request-Id (the service's log has the details)
err-credit-exceeds-original = this credit note { $bound ->
    [at-least] of at least
   *[exact] of
} { $total } is more than what is left to refund of the original invoice { $original_rn } (codeDEFDGI { $reference }): its total is { $original_total }, the credit notes of it already certified come to { $credited } and those being certified to { $pending }; { $room } is left. Nothing was sent. Lower its amounts, or check its reference
err-above-max-total = the total of this invoice ({ $bound ->
    [at-least] at least { $total }, before VAT
   *[exact] { $total }
}) is above this organization's largest invoice total ({ $max }). Nothing was sent. Check its amounts (prices, quantities, unit); if the invoice is right, { -gateway-operator } can raise the limit (emcf-gateway org update --max-invoice-total)

## Why the DGI does not accept the token ($reason of err-token-rejected)

token-file-unreadable = this device's token file cannot be read (the service's log says why)
token-file-empty = this device's token file is empty: paste the e-MCF's token from the DGI portal into it
token-malformed = this device's token file holds characters an HTTP header cannot carry (a line break inside, a control character)
token-rejected-by-dgi = the DGI rejected the e-MCF's token (HTTP { $status }): it expired or was revoked, a new token is needed

## Why the device cannot certify now ($reason of err-device-not-ready, err-device-unavailable)

reason-link-down = the link with the box is down (the service's log says why)
reason-no-answer = the device did not answer command { $command }
reason-disconnected = the device link is disconnected
reason-outcome-unknown = the outcome of the finalization (38h) is unknown
reason-state-unreadable = the box's state (C1h) cannot be read (the service's log says which field)
reason-bad-reply = the box's reply to command { $command } cannot be read (the service's log says why)
reason-not-sent = a command could not be sent to the box (the service's log says which)
reason-stopping = the gateway is stopping
reason-state-refused = it refused to give its state (C1h), in its own words, quoted as they came: "{ $text }"
reason-state-refused-silently = it refused to give its state (C1h): no text
reason-rate-unreadable = its C1h gives the VAT rate of group { $group } as { $value }, which is not a rate
reason-not-confirmed-cancelled = the device did not confirm the invoice; it was cancelled and nothing was certified
reason-settling-earlier = the gateway is settling an earlier invoice with the device
reason-replica-lease = this gateway process cannot confirm that it may still certify (its database does not answer in time): another replica takes the request
reason-sandbox-start-failed = the sandbox device could not start (the service's log says why)
reason-stored-device-unopened = the e-MCF's token, kept sealed in the register, opens with no key of this replica ([store] secret_key_file): the service's log says why
reason-dgi-no-answer = no answer from the DGI web API to the request; nothing was certified
reason-dgi-unreadable = the DGI's answer to the request could not be read; nothing was certified
reason-dgi-request-expired = the DGI's request was held too long and was cancelled; nothing was certified
reason-dgi-confirm-unreachable = the DGI could not be reached to confirm; nothing was certified
reason-organization-changing = the organization's settings changed several times while this invoice was admitted; nothing was reserved, send it again
reason-quota-changing = many invoices of the organization were certified while this one was admitted; nothing was reserved, send it again

## The HTTP layer (src/api)

err-no-such-path = no such path; the API is under /api/v1
err-method-not-allowed = method not allowed on this path; allowed: { $allowed }
err-body-too-large = request body larger than { $limit } bytes
err-body-too-slow = the request body arrived too slowly (under { $rate } bytes per second); send the whole body at once
err-not-json = the body must be JSON: send 'Content-Type: application/json'
err-body-unreadable = the request body could not be read whole (connection cut, or invalid chunked encoding); send it again
err-request-timeout = the request took too long; if it was an invoice, GET /api/v1/Invoice/{"{"}rn{"}"} or retry the same request later to get its result
err-register-halted = the invoice register is damaged and certification is stopped until { -gateway-operator } restores it (the service's log says what is damaged)
err-too-many-connections = too many connections from your address (at most { $max } at once); close idle connections or retry in a moment

## The landing page (src/api/landing.rs)
landing-title = e-MCF gateway
landing-what = This service certifies the business's invoices with the DGI, through its e-MCF box or the e-MCF web API. Tills and ERPs on the local network call it; administrators follow everything on the dashboard.
landing-ready = Certification works right now.
landing-not-ready = Certification does not work right now: the dashboard and the service's log say why.
landing-dashboard = Dashboard (organizations' administrators)
landing-openapi = API description (OpenAPI, for integrators)
landing-status = Service status (JSON)
landing-docs = The documentation (installation, configuration, error codes) is in the docs/ folder shipped with the program.

## An administrator settling an invoice in doubt (src/certify/settlement.rs)
resolve-no-name = say who settles it (a name): it is journaled with the outcome
resolve-not-awaiting = invoice in doubt { $id } is not waiting for an administrator (see `emcf-gateway intent list`): the gateway is still settling it with its channel, or it is already settled
resolve-element-missing = { $name } is missing: copy it from the DGI's portal
resolve-element-bad = { $name } is not a value the DGI shows: it is written in printable ASCII characters (no accent, no control character), 500 at most
resolve-code-def-bad = codeDEFDGI "{ $code_def }" ({ $length } characters): a codeDEFDGI is 24 characters, upper-case letters A to Z and digits, for example "XN56YAPV37MZLNZLX6MOC3A5" (or grouped by 4 with dashes, "XN56-YAPV-37MZ-LNZL-X6MO-C3A5")
resolve-code-def-taken = codeDEFDGI "{ $code_def }": it is already that of an invoice in the register (for a credit note, its original's); type the codeDEFDGI the DGI's portal shows for this invoice
resolve-nim-bad = nim "{ $nim }": the NIM of a DGI e-MCF is written with two upper-case letters, 8 digits, a dash and its number, for example "CD01002923-1"
resolve-counters-bad = counters "{ $counters }": write them as the DGI shows them, "FC/TC { $invoice_type }": two numbers from 1, FC at most TC, then this invoice's type, { $invoice_type } (for example "12/345 { $invoice_type }"; for an FV invoice, "12/345 FV")
resolve-qr-form = qrCode "{ $qr_code }": the QR code's text is PREFIX;NIM;codeDEFDGI;NIF;YYYYMMDDHHMMSS, 5 fields separated by ";" (it has { $fields }), the prefix in upper-case letters, digits and dashes, the date and time in 14 digits, for example "DGI-RDC;CD01002923-1;XN56YAPV37MZLNZLX6MOC3A5;A1234567B;20261123100000"
resolve-qr-like = qrCode "{ $qr_code }": the QR code's text is written like those of the invoices this channel already certified, { $fields } fields separated by ";" with the same prefix, for example "{ $example }"
resolve-qr-mismatch = qrCode: its { $part ->
    [nim] NIM
    [codeDEFDGI] codeDEFDGI
   *[nif] NIF
} "{ $found }" is not { $part ->
    [nim] the NIM typed
    [codeDEFDGI] the codeDEFDGI typed
   *[nif] the organization's NIF
} ("{ $expected }"): copy the QR code of this very invoice
resolve-text-too-long = the name and the note are at most { $max } characters
resolve-text-bad = { $field ->
    [by] the name
   *[note] the note
} must fit on one line: no line break, control character or writing direction mark (and, for the name, no ";")

## Warnings on a certified invoice (src/certify/warnings.rs): warningDesc, beside warningCode
warn-original-not-in-register = credit note { $rn } refunds the invoice of codeDEFDGI { $reference }, which this register does not hold: it was certified as sent, without its amount being compared with the original's total. If the original was certified before the gateway or elsewhere, nothing to do; else check the reference (a typo would refund another invoice) and the amount
warn-usd-amounts-in-cdf = invoice { $rn } is in USD but worth only { $usd } USD in all (total { $total } CDF): amounts are always in CDF, and curRate is the CDF per USD rate. If its prices were sent in USD, it was certified for far less than meant: cancel it with a credit note (FA) and certify it again under a new rn with its amounts in CDF

## notice
err-unknown-api-version = this API version is not served; versions served: { $served }
notice-page-kind = Change notice of the invoicing gateway
notice-page-effective = Takes effect on { $date }.
notice-page-retires = On that date, API version { $version } will be retired: until then its answers carry the Deprecation and Sunset headers.
notice-page-published = Published { $date }

## pkg: a service without a device (src/api/mod.rs, Halt::NoDevice)
err-no-device-configured = no device configured: this gateway certifies no invoice. Next step: name the e-MCF box in { $file } (a [[devices]] block, see docs/install.md), then restart the service (systemctl restart emcf-gateway).

## outage: the register cannot be written (src/certify/storage_fault.rs, unrecorded.rs)
register-fault-no-space = the gateway's disk is full
register-fault-read-only = the gateway's disk is read-only
register-fault-io = the gateway's disk fails to write
register-fault-database = the register's PostgreSQL database does not answer
register-fault-reason = the invoice register cannot be written ({ $why }): no invoice is certified until it can be; certification resumes by itself as soon as it can, without a restart
err-register-unwritable = the invoice register cannot be written ({ $why }): nothing was sent to the device and no quota was used; retry later, certification resumes by itself once the register can be written
err-certified-not-recorded = { $channel ->
    [web_api] the DGI certified
   *[box] the device certified
} invoice { $rn }, but the register could not record it yet; send the same request again later: you will get the same certification

## issue 27: a service that always answers (src/api/conn_io.rs, src/api/peers.rs)
err-head-timeout = the request headers did not arrive in time; the connection is closed. Send the whole request at once
err-head-unreadable = the request headers could not be read (malformed request line or header); fix the request
err-uri-too-long = the request's path is too long; shorten it
err-head-too-large = the request headers are too large (too many headers, or too long); send fewer headers or shorter values
err-server-busy = the service has every connection busy (at most { $max } at once); retry in a moment
status-stopping = the service is stopping: it finishes the invoices in progress and takes no new ones

# A register behind its channel (issue 27)
err-register-behind = the e-MCF device certified invoices the gateway's register does not hold (counters no. { $missing }): it certifies nothing more until an administrator settles it. Do not send the invoice again under another rn; retry later and tell { -gateway-operator }
err-register-behind-web-api = the DGI web API's e-MCF certified invoices the gateway's register does not hold (counters no. { $missing }): nothing more is certified until an administrator settles it. Do not send the invoice again under another rn; retry later and tell { -gateway-operator }

# A lost rn, acknowledged with its rn (issue 27)
err-lost-rn = the device certified invoice { $rn } as its number { $number } but the gateway's register lost it: it is never certified again; see the DGI's portal for its elements
