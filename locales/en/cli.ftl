# cli
# The same ids, with the same variables, in locales/fr and locales/en (src/i18n/catalogue.rs tests).

## Demo start (src/cli/demo.rs)
cli-demo-created = Demo organization created on the bundled simulator (nothing is fiscal). Its keys are shown this once: store them now.
cli-demo-try = Try:
cli-demo-lost = Lost a key? A new one: emcf-gateway key issue --org { $org }
cli-demo-existing = The demo organization "{ $org }" exists: its keys were given at its first start (on the screen, or in { $file } if the output was not a terminal). For a new API key:
cli-demo-dashboard = For the dashboard ({ $url }), a sign-in token:

## State directory (src/cli/state_dir.rs)
cli-no-state-dir = no register in { $dir }: this command creates nothing. Run it from the service's folder, or give the state directory (--state-dir, EMCF_STATE_DIR, or state_dir in the configuration file). Only "serve" and "org add" create a register.

## index rebuild
cli-index-service-running = stop the service first: it holds { $dir }
cli-index-agrees = the index agrees with the journal: nothing to rebuild, nothing was changed (--force rebuilds it anyway)
cli-index-rebuilt = index rebuilt from the journal (the old one is kept aside: { $aside }); the journal verifies

## org (src/cli/org_commands.rs)
cli-org-exists = organization "{ $id }" exists: to change it, emcf-gateway org update { $id } ...
cli-org-not-found = no organization "{ $id }"
cli-org-bad-plan = --plan must be start or grow
cli-org-bad-email = --admin-email { $address }: not an e-mail address (name@example.cd)
cli-org-bad-max-total = --max-invoice-total { $value }: write an amount in CDF above 0, with at most 2 decimals and a dot as separator (for example 1500000 or 1500000.50)
cli-org-no-max-total = none
cli-org-unknown-device = no device "{ $device }" in the configuration (devices: { $known }); an organization can only certify on a configured device
cli-org-nif-differs = device "{ $device }" is personalized for NIF { $device_nif }, not { $nif }: every invoice would be refused (code 153). Fix the NIF, or the organization's device.
cli-org-nif-unchecked = warning: the NIF could not be checked with device "{ $device }" ({ $reason }); it will be at the first invoice (code 153 if it differs).
cli-org-service-stopped = the service is not running
cli-org-saved = organization "{ $id }" saved
cli-org-list-header = ID | NIF | ISF | PLAN | DEVICE | MAX/INVOICE | NAME
cli-org-quota-override = the organization's own quota
cli-org-quota-plan = the { $plan } plan's quota
cli-org-quota-use = { $used } used of { $quota }, { $remaining } left ({ $source })
cli-field-id = Id
cli-field-name = Name
cli-field-plan = Plan
cli-field-device = Device
cli-field-admin-emails = Alerts to
cli-field-quota = Quota { $year }
cli-field-max-total = Max total

## key, dashboard-token (src/cli/key_commands.rs)
cli-key-issued = key { $id }: store this key now, it is not shown again
cli-key-list-header = ID | ENVIRONMENT | ENABLED | CREATED | LABEL
cli-key-enabled = key { $id } enabled
cli-key-disabled = key { $id } disabled: the next request with it gets 401
cli-token-issued = dashboard token { $id }: give it to the organization's admin now, it is not shown again
cli-token-list-header = ID | REVOKED | CREATED | LABEL
cli-token-revoked = dashboard token { $id } revoked; its sessions have ended

## log (src/cli/admin_commands.rs)
cli-log-list-header = SEQ | ORG | RN | TYPE | TOTAL (CDF) | DEF/DGI CODE | CERTIFIED

## main.rs
cli-error = error: { $text }
cli-org-nif-not-said = the device has not said yet which NIF it is personalized for

## log show (src/cli/invoice_view.rs)
cli-show-title = { $document } { $rn } — { $register ->
    [sandbox] sandbox
   *[other] production
} register, entry { $sequence }
cli-show-seller = Seller
cli-show-type = Type
cli-show-certified = Certified at
cli-show-received = Received at
cli-show-channel = Device · key
cli-show-mode = Prices
cli-show-currency = Invoice currency
cli-show-reference = Original invoice
cli-show-operator = Operator
cli-show-client = Client
cli-show-no-client = (no client on the invoice)
cli-show-client-name = Name
cli-show-client-nif = NIF
cli-show-client-type = Client type
cli-show-client-type-desc = Type description
cli-show-client-contact = Contact
cli-show-client-address = Address
cli-show-client-email = E-mail
cli-show-client-rccm = RCCM
cli-show-items = Items
cli-show-items-header = # | NAME | TYPE | GR. | QUANTITY | UNIT PRICE (CDF) | AMOUNT (CDF)
cli-show-item-specific-tax = { $name }: specific tax { $amount }
cli-show-item-price-change = { $name }: original price { $original } ({ $why })
cli-show-payments = Payments
cli-show-no-payments = (none sent: one ESPECES payment of the total was recorded)
cli-show-comments = Comments
cli-show-groups = Amounts per tax group (CDF)
cli-show-groups-header = GROUP | HT | VAT | TTC
cli-show-total = Total TTC
cli-show-vat = Total VAT
cli-show-specific-tax = Specific taxes
cli-show-usd = USD equivalent
cli-show-security = Security elements
cli-show-code = DEF/DGI code
cli-show-counters = Counters
cli-show-nim = Device number (NIM)
cli-show-device-time = Device date
cli-show-qr = QR code text
cli-show-original = This credit note reduces the invoice:
cli-show-original-unknown = { $code } (not in this register: certified elsewhere or before the gateway)
cli-show-credit-notes = Credit notes that reduce this invoice:
cli-show-links-header = # | RN | TYPE | TOTAL (CDF) | DEF/DGI CODE | CERTIFIED AT
cli-show-kept = Content kept as certified: its SHA-256 is the entry's digest ({ $digest }).
cli-show-not-kept = Content not kept: invoice certified by 1.4.0 or before, which kept only the digest { $digest }.
cli-show-unreadable = The kept content cannot be shown as the certified one: it does not match the entry's request digest, or this release cannot read it (run "log verify"; technical detail: { $reason }).

## log export (src/cli/export.rs)
cli-export-dates-reversed = --from is after --to
cli-export-done = { $count ->
    [one] { $count } entry exported
   *[other] { $count } entries exported
}
cli-progress-entries = entries read
cli-progress-rebuild = of the journal read again (index rebuild)

## errors at the CLI's edge (src/cli/errors.rs)
cli-error-because = { $what }: { $why }
cli-error-detail = { $text } (technical detail: { $detail })
cli-error-text = { $text }
cli-error-unexpected = the command failed unexpectedly
cli-runtime-failed = the gateway could not start its task runtime
cli-listen-failed = cannot listen on { $addr }
cli-register-open = cannot open the register in { $dir }
cli-register-held = { $dir } is held by a running gateway whose admin socket does not answer: check the service
cli-database-open = cannot open the register in the PostgreSQL database { $url }
cli-embedded-only = "emcf-gateway { $command }" acts on the embedded register's files (state_dir), but the configuration keeps the register in PostgreSQL ([store] url): back up and restore the database with its own tools (pg_dump, or a base backup with its WAL), see docs/postgresql.md
cli-capture-create = cannot create the wire capture { $path }
cli-alerts-setup = cannot set up the alerts' e-mail ([smtp] in the configuration)
cli-reserved-device-name = the device name "{ $name }" and names starting with "sandbox-" are kept for the bundled simulator: rename that [[devices]] entry
cli-replica-dir-held = another gateway process runs on the state directory { $dir }: give each replica a state_dir of its own
cli-replica-fenced = this replica stopped: its lease ran out and another replica took its work over (the database could not be reached in time); its service starts it again as a new replica
cli-web-api-channel = cannot set up the web API channel of device "{ $device }"
cli-simulator-start = cannot start the bundled simulator (fiscal memory { $path })
cli-web-api-simulator-start = cannot start the bundled web API simulator
cli-create-dir = cannot create { $path }
cli-write-file = cannot write { $path }
cli-day-format = write a day as YYYY-MM-DD
cli-state-dir-writable = the state directory { $dir } can be written by other users (mode { $mode }): they could replace the register; the service does not start. Fix: chmod 700 { $dir }
cli-state-dir-create = cannot create the state directory { $dir }: { $reason }
cli-state-dir-read = cannot read the state directory { $dir }: { $reason }

## what systemd shows (systemctl status), src/cli/serve.rs
cli-status-listening = listening on { $addr }
cli-status-halted = register damaged: certification stopped

## demo, continued
cli-demo-org-name = Demo shop (simulated device, not fiscal)
cli-demo-live-label = demo live key
cli-demo-sandbox-label = demo sandbox key
cli-demo-created-file = Demo organization created on the bundled simulator (nothing is fiscal). Its keys are not printed here (this output is not a terminal: a log could keep them): they are in this file, readable by this account only. Store them, then delete the file.

## index rebuild, log verify, continued
cli-index-rebuild-failed = the index could not be rebuilt
cli-index-move-aside = cannot move the index aside to { $to }
cli-log-verified = journal verified: every CRC and the hash chain are intact ({ $records ->
    [one] { $records } record
   *[other] { $records } records
}, { $certified ->
    [one] { $certified } register entry
   *[other] { $certified } register entries
}, of which { $kept } { $kept ->
    [one] keeps its invoice
   *[other] keep their invoice
} as certified; head { $head })

cli-log-verified-database = PostgreSQL register verified: { $chains } { $chains ->
    [one] organization hash chain is intact
   *[other] organization hash chains are intact
}, the numbers without a gap ({ $entries ->
    [one] { $entries } register entry
   *[other] { $entries } register entries
}, of which { $kept } { $kept ->
    [one] keeps its invoice
   *[other] keep their invoice
} as certified)

## device probe (src/cli/device_commands.rs)
cli-probe-device = device
cli-probe-nim = machine id (NIM)
cli-probe-nif = taxpayer NIF
cli-probe-clock = box clock
cli-probe-counters = counters
cli-probe-counters-value = { $tc ->
    [one] { $tc } invoice
   *[other] { $tc } invoices
} ({ $fvc ->
    [one] { $fvc } sale
   *[other] { $fvc } sales
}, { $frc ->
    [one] { $frc } credit note
   *[other] { $frc } credit notes
})
cli-probe-last-invoice = last invoice
cli-probe-rates = VAT rates
cli-probe-rates-configured = not in its C1h: the configured rates are used
cli-probe-currency = currency (C1h)
cli-probe-dgi = link with the DGI
cli-probe-taxpayer = taxpayer { $key }
cli-probe-status-bytes = status bytes
cli-probe-can-certify = can certify now
cli-probe-cannot = NO: { $why }
cli-probe-differences = differences
cli-probe-no-difference = none: every reply is as PROTOCOL.md describes
cli-probe-some-differences = from PROTOCOL.md, in fields the gateway reads tolerantly:
cli-probe-difference = { $command } { $field }: received { $raw } ({ $count } times), PROTOCOL.md says: "{ $expected }"
cli-probe-error = error: { $text }
cli-probe-unknown = unknown
cli-probe-incomplete = the box did not answer every question (see the errors above)
cli-probe-capture-ignored = note: the running service owns the port, so --capture is ignored; start the service with "serve --capture FILE" to capture its traffic
cli-probe-no-devices = no [[devices]] in the configuration: nothing to probe on a port (the demo's bundled simulator is probed through the running service)
cli-probe-unknown-device = no configured device is named "{ $name }" (configured: { $known })
cli-probe-which-device = several devices are configured ({ $known }): name one with --device
cli-probe-silent = the box on { $path } does not answer ({ $detail }); check the cable, the power, the baud rate and that no other program holds the port

## device anomalies
cli-anomalies-none = no fiscal anomaly: every box's counters follow the register
cli-anomalies-header = ID | DETECTED | DEVICE | NIM | WHAT | REGISTER KNEW | BOX SAID | ACKNOWLEDGED
cli-anomaly-register-knew = NIF { $nif } TC { $tc } (entry { $sequence })
cli-anomaly-box-said = NIF { $nif } TC { $tc } ({ $place })
cli-anomaly-ack-by = by { $by }: { $note }
cli-anomaly-acknowledged = fiscal anomaly { $id } acknowledged by { $by } on { $at }: { $note }
cli-anomaly-not-acknowledged = fiscal anomaly { $id } is not acknowledged

## intent (src/cli/intent_commands.rs)
cli-intents-none = no open intent: nothing is in doubt
cli-intents-header = ID | STATE | ORG | REGISTER | RN | TYPE | DEVICE | TOTAL | UID
cli-intent-awaiting = waits for an administrator
cli-intent-settling = being settled with its channel
cli-intent-why = intent { $id }: why (the channel's words): { $reason }
cli-intent-date-time = --date-time "{ $value }": write YYYY-MM-DDTHH:MM:SS (for example 2026-11-23T10:00:00)
cli-intent-say-which = say what the DGI's portal shows: --certified (with its elements) or --not-certified
cli-intent-not-certified = intent { $id } settled as not certified (journaled)
cli-intent-certified = intent { $id } settled as certified (journaled):
cli-intents-need-service = the service is not running (no admin socket at { $path }): invoices in doubt are listed and settled by the running service

## configuration (src/config): the key is said first, then what is wrong with it
config-read = cannot read the configuration file { $path }: { $reason }
config-parse-at = the configuration file { $path } is not valid at line { $line }, column { $column }, in "{ $text }" (the TOML parser says: { $parser })
config-parse = the configuration file { $path } is not valid (the TOML parser says: { $parser })
config-unknown-at = the configuration file { $path } is not valid, line { $line }: { $what ->
    [value] unknown value "{ $name }"; the values allowed here are: { $allowed }
   *[key] unknown key "{ $name }"; the keys allowed here are: { $allowed }
}
config-unknown = the configuration file { $path } is not valid: { $what ->
    [value] unknown value "{ $name }"; the values allowed here are: { $allowed }
   *[key] unknown key "{ $name }"; the keys allowed here are: { $allowed }
}
config-env = the environment variable { $var }="{ $value }" is not valid: { $problem }
config-invalid-in-file = invalid configuration (file { $file }): { $key } { $problem }
config-invalid = invalid configuration: { $key } { $problem }
config-key = { $key }
config-key-in-device = { $key } in [[devices]] entry { $number } ("{ $name }")
config-languages = the gateway speaks fr and en
config-language-unknown = is "{ $value }": the gateway speaks fr and en
config-offset-bad = is "{ $value }", not a UTC offset: write it as "+01:00" (Kinshasa, West DRC) or "+02:00" (Lubumbashi, East DRC), at most 14 hours
config-listen-bad = is "{ $value }": { $problem }
config-listen-expected = expected an address or a host name and a port, e.g. 0.0.0.0:8080 (all interfaces), 127.0.0.1:8080 or localhost:8080 (this machine only), [::]:8080
config-listen-unresolved = the host name "{ $host }" cannot be resolved ({ $detail }); give an address and a port, e.g. 0.0.0.0:8080 or 127.0.0.1:8080
config-listen-no-address = the host name "{ $host }" has no address; give an address and a port, e.g. 0.0.0.0:8080 or 127.0.0.1:8080
config-out-of-range = is { $value }{ $unit }: it must be between { $min } and { $max }{ $unit }
config-unit = { $unit ->
    [seconds] {" "}seconds
    [ms] {" "}ms
    [minutes] {" "}minutes
    [days] {" "}days
    [bytes] {" "}bytes
    [mib] {" "}MiB
    [bytes-per-second] {" "}bytes per second
   *[none] {""}
}
config-state-dir-empty = is empty: give a directory, or remove the key for the default
config-plan-zero = is 0: give the number of invoices per year (at least 1)
config-device-name-repeated = repeats the name of entry { $first } (names are compared ignoring case): give each [[devices]] entry its own name
config-web-api-keys-on-box = and the other web API keys (token_file, ...) belong to kind = "web_api" entries: add kind = "web_api" or remove them
config-path-empty = is empty: give the serial port, e.g. /dev/serial/by-id/usb-...
config-baud-zero = is 0: give the line speed of the box, usually 115200
config-path-on-web-api = is set on a kind = "web_api" entry: the web API has no serial port; remove path
config-seq-single = has a single value: every command then has the same SEQ, and a box that replays a repeated SEQ would answer each with its last reply; set seq_replay = false (a box that wants one SEQ executes every frame)
config-window-over-budget = ({ $window } ms) exceeds command_budget_ms ({ $budget } ms): the window must fit in a command's budget
config-poll-over-budget = ({ $poll } ms) exceeds finalize_budget_ms ({ $budget } ms)
config-the-simulator = the embedded simulator
config-the-device = device "{ $name }"
config-timeout-below-budget = ({ $timeout } s) must be greater than the longest budget of { $what } ({ $budget } ms, the credit-note/finalize budget), or a slow certification would be cut off mid-way: raise request_timeout_secs
config-device-name-empty = is empty: give the device a short name, e.g. "shop"
config-device-name-long = is longer than { $max } characters: use a short name
config-device-name-chars = may contain only ASCII letters, digits, - and _
config-seq-range-bad = is "{ $value }", not a SEQ range: write the first and last value in hex, e.g. "20-FF" (the default), "20-7F", or "20-20" for a box that wants one SEQ
config-seq-range-order = is "{ $value }": the first value must be at least 20 and not after the last one
config-rate-group = names "{ $letter }", which is not a tax group A to P
config-rate-not-number = gives { $letter } = "{ $value }", which is not a rate such as "16.00"
config-rate-range = gives { $letter } = "{ $value }": a rate is a percentage in [0, 100) with at most 2 decimals
config-url-missing = is missing: give the API base, e.g. "https://edef.dgirdc.cd" (production) or "https://developper.dgirdc.cd/edef" (test)
config-url-not-url = is "{ $value }", which is not a URL ({ $detail })
config-url-scheme = is "{ $value }": it must start with https:// (or http:// for a local simulator) and name a host
config-url-query = is "{ $value }": give the base only, without a query
config-sandbox-token-missing = is missing: the file holding the token of the test e-MCF at sandbox_url
config-sandbox-token-alone = is set without sandbox_url: give both, or neither (sandbox keys then use the bundled simulator)
config-token-missing = is missing: the file holding this e-MCF's token (JWT) from the DGI portal, readable by the service only
config-pending-limit = is { $value }: it must be between 1 and 100 (the DGI allows 10)
config-cdf-currency = is "{ $value }", not one of "omit" (the default), "1", "0" or "-1"
config-anonymous-client = is "{ $value }", not "omit" (the default) or "pp"
config-quota-thresholds = takes distinct percentages from 1 to 100, e.g. [80, 90, 100]
config-smtp-host = must be a host name
config-smtp-port = must be 1 to 65535
config-smtp-from = must be an address, e.g. "emcf-gateway <alertes@example.cd>"
config-public-url-form = is "{ $value }": give the address people open the gateway at, with http:// or https:// and a host, without a user name, query or fragment, e.g. "https://factures.example.cd"
config-public-url-dashboard = is "{ $value }": give the gateway's address without /dashboard (the e-mails add it)
config-proxy-not-address = holds "{ $value }", which is not an IP address or a CIDR range (such as 127.0.0.1, 10.0.0.0/8 or ::1)
config-proxy-prefix = holds "{ $value }": the prefix after / must be a number from 0 to { $bits } (such as 10.0.0.0/8)
config-proxy-host-bits = holds "{ $value }", which has bits set after its first { $prefix }: write { $range } for the range, or { $address } for that one address
config-smtp-username = and smtp.password_file go together (the password is read from that file)

## device probe's words (src/device/probe.rs, src/certify/edef/health.rs): in the JSON too, in English
probe-answered-other = { $command } answered { $detail }
probe-failed = { $command }: { $reason }
probe-last-none = none yet
probe-last-invoice = { $kind } { $rn } certified on { $at }, DEF/DGI code { $code }
probe-last-invoice-total = { $kind } { $rn } certified on { $at }, DEF/DGI code { $code }, total { $total }
probe-last-unreadable = reported but unreadable: { $detail }
probe-rate-unreadable = unreadable { $raw }
probe-dgi = state { $state }, last contact { $contact }, { $sent } sent (EC), { $stored } in DC
probe-dgi-contact = { $at }
probe-dgi-never = never
probe-dgi-error = { $text }, last error { $error }
probe-field-refused = (refused: { $text })
probe-field-answered = (answered { $detail })
probe-field-failed = ({ $reason })
probe-web-api = web API { $url }; token valid until { $until }; { $pending ->
    [one] { $pending } request pending
   *[other] { $pending } requests pending
}
probe-web-api-token-until = { $at }
probe-web-api-token-not-said = (not said)
probe-web-api-blocked = the DGI says this e-MCF cannot certify now

## config check (src/cli/config_check.rs, src/cli/config_check/)
cli-check-level-ok = OK
cli-check-level-note = note
cli-check-level-warning = WARNING
cli-check-level-error = ERROR
cli-check-all-right = All is right: serve can start with this configuration.
cli-check-outcome = Outcome: { $errors ->
    [one] { $errors } error
   *[other] { $errors } errors
}, { $warnings ->
    [one] { $warnings } warning
   *[other] { $warnings } warnings
}.
cli-check-failed = the check found { $errors ->
    [one] an error
   *[other] { $errors } errors
}: fix each ERROR line as it says, then run emcf-gateway config check again
cli-check-rest-not-done = the other checks need a configuration serve accepts: fix the file first, then run emcf-gateway config check again
cli-check-file-none = no configuration file (no --config, no EMCF_CONFIG, no /etc/emcf-gateway/config.toml): the built-in settings apply, with the bundled simulator. For production, write /etc/emcf-gateway/config.toml
cli-check-file-ok = configuration file { $path } read as serve reads it: valid (mode { $mode }, owner { $owner })
cli-check-file-unreadable = the configuration file { $path } can no longer be read: { $reason }
cli-check-file-writable = the configuration file { $path } can be changed by other users (mode { $mode }): they could send the invoices to another device. Fix: chmod go-w { $path } (the package installs it 0640, root:emcf-gateway)
cli-check-file-world-readable = the configuration file { $path } can be read by every user (mode { $mode }) and names the secret files. Fix: chmod o-r { $path } (the package installs it 0640, root:emcf-gateway)
cli-check-state-dir-ok = state directory { $dir }: a folder in 0700, owner { $owner }, which this account can write to
cli-check-state-dir-missing = the state directory { $dir } does not exist yet: serve will create it (0700) at its first start. If it should exist already (a moved register?), fix state_dir
cli-check-state-dir-cannot-create = the state directory { $dir } does not exist and this account ({ $user }) cannot create it in { $parent }. Fix: mkdir -p { $dir } && chmod 700 { $dir }, then give it to the service's user (chown)
cli-check-state-dir-not-dir = { $dir } is not a folder: state_dir must name the register's folder. Fix: name a folder (the package uses /var/lib/emcf-gateway)
cli-check-state-dir-not-writable = this account ({ $user }) cannot write to the state directory { $dir } (owner { $owner }): the service must run as { $owner }. Run the check as that account (sudo -u { $owner } emcf-gateway config check) or as root
cli-check-state-dir-readable = the state directory { $dir } can be read by other users (mode { $mode }): they see the register and the digests of the keys. Fix: chmod 700 { $dir }
cli-check-service-running = the service is running (its admin socket answers): the boxes are asked through it, since it holds their ports
cli-check-service-stopped = the service is stopped (no admin socket answers): the boxes' ports are opened here, read-only
cli-check-service-stopped-no-box = the service is stopped (no admin socket answers)
cli-check-service-unusable = the admin socket cannot be used by this account ({ $user }): { $reason }. Run the check as root or as the service's account
cli-check-no-device = no device configured: the bundled simulator certifies, nothing is fiscal. To certify, add a [[devices]] block (docs/configuration.md)
cli-check-no-device-demo-off = no device configured (demo = false): the gateway certifies no invoice. To certify, uncomment and fill in the [[devices]] block (docs/install.md, 2.2), then restart the service
cli-check-device-not-asked = device "{ $name }" not checked: the service holds its port and its admin socket does not answer this account
cli-check-how-service = through the service
cli-check-how-port = on { $path } at { $baud } baud, read-only
cli-check-how-web-api = web API { $url }, status call with its token
cli-check-device-ok = device "{ $name }" ({ $how }): it answers, NIM { $nim }, NIF { $nif }, and can certify
cli-check-device-errors = device "{ $name }" ({ $how }): { $errors }. Fix: check the cable or the address and the token; emcf-gateway device probe --device { $name } gives the details
cli-check-device-blocked = device "{ $name }" ({ $how }): it answers but cannot certify: { $why }
cli-check-device-service-gone = device "{ $name }": the service stopped during the check; run it again
cli-check-device-service-refused = device "{ $name }": the service did not probe it: { $reason }. If it was just added to the file, restart the service (systemctl restart emcf-gateway) so that it reads it
cli-check-device-missing = device "{ $name }": { $path } does not exist (box unplugged, or a wrong name). Fix: plug the box in, find its stable name with ls -l /dev/serial/by-id/ and put it in path
cli-check-device-denied = device "{ $name }": permission denied on { $path } for { $user }. Fix: sudo usermod -aG dialout { $user }, then open a new session (the package's emcf-gateway user is in dialout already)
cli-check-device-busy = device "{ $name }": { $path } exists but does not open: another program holds it (another gateway, ModemManager, a serial terminal) or nothing answers behind it. Fix: fuser -v { $path } shows who holds it; stop it, or plug the box in again
cli-check-device-open-failed = device "{ $name }": { $path } does not open: { $reason }
cli-check-device-silent = device "{ $name }": the port opens, but { $said }. The configured speed is baud = { $baud }: at another speed than the box's, nothing readable comes back
cli-check-web-api-setup = device "{ $name }" (web API): its client cannot be set up: { $detail }. Fix: check ca_file
cli-check-readable-ok = { $key } { $file }: readable
cli-check-readable-not = { $key }: { $file } cannot be read by { $user }: { $reason }
cli-check-secret-ok = { $key } { $file }: present, mode { $mode }, owner { $owner }
cli-check-secret-missing = { $key }: { $file } does not exist. Fix: create it readable by the service only (install -m 600 -o emcf-gateway /dev/null { $file }), then write the secret on its first line
cli-check-secret-not-file = { $key }: { $file } is not a file. Fix: name the file that holds the secret
cli-check-secret-unreadable = { $key }: { $file } cannot be read by { $user }: { $reason }. Run the check as root or as the service's account, which must be able to read it
cli-check-secret-empty = { $key }: { $file } is empty. Fix: write the secret in it (the token from the DGI portal, or the SMTP relay's password) on its first line
cli-check-secret-mode = { $key }: { $file } can be read by others than its owner (mode { $mode }): the secret is not protected. Fix: chmod 600 { $file }
cli-check-secret-owner = { $key }: { $file } belongs to { $owner }, but the service runs as { $service } (the state directory's owner): in mode 0600 it cannot read it. Fix: chown { $service } { $file }
cli-check-smtp-none = no [smtp] table: no alert is e-mailed (docs/configuration.md)
cli-check-smtp-not-tried = SMTP relay { $relay } not tried: add --smtp to connect to it and log in (no message is sent)
cli-check-smtp-ok = SMTP relay { $relay }: connection (tls = { $tls }), { $login ->
    [true] login
   *[other] no login
} and NOOP accepted; no message sent
cli-check-smtp-unreachable = SMTP relay { $relay } cannot be reached ({ $detail }). Fix: check smtp.host and smtp.port, and that no firewall blocks that port outbound
cli-check-smtp-tls = SMTP relay { $relay }: the encrypted connection failed with tls = "{ $tls }" ({ $detail }). Fix: starttls goes with port 587, tls with port 465, none only for a relay on this machine
cli-check-smtp-refused = SMTP relay { $relay }: refused ({ $detail }). Fix: check smtp.username, the password in smtp.password_file, and that the relay accepts this machine
cli-check-smtp-other = SMTP relay { $relay }: { $detail }. Fix: check the [smtp] table

## notice
notice-too-soon = the effective date { $effective } begins in less than { $days } full days: a change notice is published at least { $days } full days (of 24 hours) before its effective date begins, in the gateway's time zone; the earliest date possible now is { $earliest } (--effective { $earliest })
notice-empty-subject = the notice's subject is empty: give it with --subject
notice-empty-body = the notice's text is empty: write it in the file of --body-file
notice-bad-subject = the notice's subject must be one line of at most { $max } characters, with no hidden character and no "=?"
notice-bad-body = the notice's text must be at most { $max } bytes, with no character that hides or turns the text
notice-unknown-version = --retires { $version }: this API version is not served (served: { $served })
notice-not-found = no notice { $id } (see "emcf-gateway notice list")
notice-file = notices file { $path }: { $detail }
notice-file-damaged = the notices file { $path } is damaged ({ $detail }): put it back from a backup; the gateway does not start without it, so that no notice is sent twice
admin-notices-need-service = change notices go through the running service, or through the notice command when it is stopped
cli-notice-body-file = cannot read the notice's text in { $path } (a UTF-8 text file)
cli-notice-added = Notice { $id } published, effective { $date }; { $orgs ->
    [one] { $orgs } organization to e-mail
   *[other] { $orgs } organizations to e-mail
}
cli-notice-mail-now = The e-mails are being sent now (see "emcf-gateway notice list").
cli-notice-mail-at-start = The service is stopped: the e-mails will be sent when it next starts.
cli-notice-no-smtp = No [smtp] relay is configured: the notice is shown, but it will be e-mailed only once the relay is configured and the service restarted.
cli-notice-service-started = the service started during the command: run it again, it will go through the service
cli-notices-none = No change notice.
cli-notice-mails = { $sent } sent, { $pending } pending
cli-notices-header = ID | EFFECTIVE | RETIRES | E-MAILS | SUBJECT
cli-notice-org-sent = sent { $at }
cli-notice-org-given-up = not sent (no valid address, or refused by the relay)
cli-notice-org-pending = pending
cli-notice-org = notice { $id }, { $org }: { $state }
cli-notice-late = notice { $id }: warning, { $pending ->
    [one] { $pending } e-mail is still pending
   *[other] { $pending } e-mails are still pending
} with less than { $days } days left before the effective date ({ $date }): those organizations will not get the { $days } days' warning promised; check the [smtp] relay and the service's log

## backup (emcf-gateway backup / restore, src/admin/backup, src/cli/backup_commands.rs)
config-backup-dir = must be an absolute folder path, for example "/var/backups/emcf-gateway"
config-backup-command = must name a program then its arguments, for example ["rsync", "-a", "{"{"}dir{"}"}", "backup@server:/srv/emcf/"]
backup-io = { $path } could not be read or written: { $reason }
backup-no-journal = { $dir } has no journal to back up: check state_dir in the configuration (or --state-dir)
backup-copy-bad = the copy { $dir } does not match its manifest: do not use it, take another one (technical detail: { $detail })
backup-busy = another backup is already writing into { $dir }: wait for it to finish
backup-record-bad = { $path } cannot be read: the next backup writes it again (technical detail: { $detail })
backup-done = Verified copy: { $dir } ({ $records } records, { $entries ->
    [one] { $entries } invoice
   *[other] { $entries } invoices
} in the register, { $files } files; journal head { $head })
backup-removed = Old copy removed (beyond [backup] keep): { $dir }
backup-command-failed = the copy { $dir } is good and kept, but the [backup] command "{ $command }" failed ({ $detail }): the copy may not have reached the other machine; fix the command, then run "emcf-gateway backup" again
backup-command-done = [backup] command succeeded: { $command }
restore-service-running = the service runs on { $dir }: stop it first (systemctl stop emcf-gateway), then run the restore again
restore-copy = Copy { $dir } of { $at }: { $records } records, { $entries ->
    [one] { $entries } invoice
   *[other] { $entries } invoices
} in the register, verified.
restore-nothing-lost-empty = The state directory has no register: nothing is lost.
restore-nothing-lost = The register in place is entirely in the copy: nothing is lost ({ $newer } records of the copy are added to it).
restore-loses = Warning: the register in place has { $n ->
    [one] { $n } invoice
   *[other] { $n } invoices
} the copy lacks ({ $records } records beyond the { $common } they have in common). Restoring removes them from the register (the current register is kept aside, nothing is deleted).
restore-unreadable = Warning: the register in place cannot be read ({ $why }): what it holds beyond the copy is unknown. Restoring keeps it aside, nothing is deleted.
restore-outside = The box (its counters) or the DGI may hold invoices certified after { $at } that the copy lacks. Next step, once started: compare the box's counters and last invoice ("emcf-gateway device probe") with the register ("emcf-gateway log list"), settle the invoices in doubt ("emcf-gateway intent list"), and for the DGI's web API check its portal. Do not send again from the ERP an invoice the box or the DGI already certified: it would be certified twice.
restore-refused = restore refused: { $dir } has invoices the copy lacks; if you accept removing them from the register (they are kept aside), run again with --force
restore-aside = What was in the state directory is kept in { $dir }.
restore-config-file = Configuration file { $original } put back in { $at } (its mode kept): copy it into place if needed.
restore-done = Restore finished in { $dir } (journal head { $head }). Start the service: the index is rebuilt from the journal; then "emcf-gateway log verify" and a new backup.
backup-copy-format = the copy { $dir } is in format { $format }, this version reads format { $read }: restore it with the version that wrote it
backup-copy-no-journal = the copy { $dir } holds no journal: do not use it, take another one
backup-copy-path = the copy { $dir } names a file outside it ({ $path }): do not use it, take another one
backup-copy-file-differs = in the copy { $dir }, the file { $file } is no longer what the backup wrote (length or SHA-256): do not use it, take another one
backup-copy-journal-differs = the journal of the copy { $dir } reads to { $records } records (head { $head }), its manifest says { $expected_records } (head { $expected_head }): do not use it, take another one
restore-written-differs = { $path } written by the restore does not match the copy: check the disk, then run the restore again
backup-dest-in-state = the destination { $dest } is inside the state directory { $dir }: choose a folder outside it, preferably on another disk
restore-src-in-state = the copy { $src } is inside the state directory { $dir }, which the restore empties: move it out first
backup-prune-failed = Warning: the copy is good, but the old copies could not all be removed ({ $why }): check the rights on the backups folder (run the backup as the service's account)

## backup (restore staged and resumable, copies of this state directory, the command, src/admin/backup)
restore-resuming = An earlier restore (copy { $copy }) did not finish: it is done again. The register that was there before it is kept in { $aside }.
restore-config-in-place = Configuration file put back in place: { $at } (the old one is kept beside it, suffixed .before-restore-<time>).
restore-config-not-named = The configuration file { $original } is not put back in place: the current configuration does not name it. It is in the state directory's restored-config-* folder: copy it yourself if needed.
backup-state-busy = another gateway process holds { $dir } (the service starting, or a command) without answering on its admin socket: run the backup again in a moment
backup-copy-unreadable = Warning: the manifest of { $dir } cannot be read (rights or damage): this folder is neither counted nor removed. Check its owner and rights (a backup run as root?).
backup-disk-full = the disk that holds { $path } is full: free some space on it (or choose another destination), then run it again (technical detail: { $reason })
restore-config-not-writable = --config-in-place would put { $path } back, but this account cannot write in its folder: nothing was restored. Run the restore as root (sudo), or without --config-in-place
backup-command-timeout = the copy { $dir } is good and kept, but the [backup] command "{ $command }" was still running after { $secs } s ([backup] command_timeout_secs): it was stopped, and the copy may not have reached the other machine; check the command (network, remote machine), then run "emcf-gateway backup" again
restore-marker-bad = { $path } cannot be read: a restore of { $dir } did not finish, and which before-restore-… folder holds the register that was there is no longer known. Nothing is restored or deleted. Delete no before-restore-… folder and ask { -gateway-operator } (technical detail: { $detail })

# A register behind its box (issue 27)
cli-anomaly-box-said-missing = NIF { $nif } TC { $tc } ({ $place }), missing from the register: { $missing }
cli-anomaly-bad-numbers = "{ $text }" is not a list of counter numbers (e.g. "7-9, 12")
cli-anomaly-acknowledged-numbers = missing certifications acknowledged: no. { $numbers }; the device certifies again, from its counter { $tc }
cli-restore-counters-title = Each device's last counters in the restored register:
cli-restore-counters-none = The restored register knows no production device yet.
cli-restore-counters-line = { "  " }NIM { $nim }: counter { $tc } (NIF { $nif }, entry { $sequence })
cli-restore-counters-check = At start, the service compares each box's counter with these: a box ahead of the restored register (certifications this copy does not hold) certifies nothing more and "emcf-gateway device anomalies list" shows it; then restore a newer copy, or acknowledge the missing numbers.
cli-restore-counters-unread = The restored register's counters could not be read ({ $why }); the service compares them with each box at start.
cli-restore-box-unread = Box "{ $device }" could not be read on its port ({ $why }); the service checks it at start.
cli-restore-box-first-use = Box "{ $device }" (NIM { $nim }, counter { $tc }) is unknown to the restored register: a first use, nothing to compare.
cli-restore-box-follows = Box "{ $device }" (NIM { $nim }) is at counter { $tc }: it is not ahead of the restored register.
cli-restore-box-ahead = WARNING: box "{ $device }" (NIM { $nim }) is at counter { $tc }, the restored register at { $known }: certifications no. { $missing } are missing from this copy. The service will certify nothing on this box until you restore a newer copy or acknowledge these numbers (emcf-gateway device anomalies ack).
cli-anomaly-bad-rn = --rn must be NUMBER=RN (a missing certification's number, then its rn as the DGI's portal shows it), not "{ $text }"
cli-anomaly-lost-rns = never certified again (their device certified them): { $rns }
cli-anomaly-rns-unknown = WARNING: the rn of no. { $numbers } is not known to the gateway: a retry of that invoice under its old rn would be certified a second time. Find each on the DGI's portal and tell the invoice's issuer never to send it again.
config-store-url-missing = is missing while the [store] table has other keys: add url = "postgresql://user@host:5432/database" (or the variable EMCF_STORE_URL), or remove the [store] table to keep the register in state_dir
config-store-url-scheme = must start with "postgresql://" (or "postgres://"), for example "postgresql://emcf@db.example.cd:5432/emcf"
config-store-url-password = contains a password: remove it from the URL and write it alone in a file only the service's user can read (chmod 600), named by password_file in [store]
config-store-url-param = must not give { $param }: write it as the key { $key } of the [store] table
config-store-url-user = must name the PostgreSQL user before the host, for example "postgresql://emcf@db.example.cd:5432/emcf"
config-store-url-host = must name the server: its host ("postgresql://emcf@db.example.cd:5432/emcf") or its socket's folder ("postgresql://emcf@/emcf?host=/run/postgresql")
config-store-url-database = must name the database after the host, for example "postgresql://emcf@db.example.cd:5432/emcf"
config-store-path-empty = is empty: give the file's path, or remove the key
config-store-tls-socket = is "{ $mode }", but the URL goes through a Unix socket, which PostgreSQL does not encrypt: write sslmode = "disable", or name a TCP host
config-store-ca-missing = is missing: with sslmode = "verify-full", the server's certificate is checked against this certificate authorities file (PEM)
config-store-ca-unused = is only used with sslmode = "verify-full" (here "{ $mode }"): write sslmode = "verify-full", or remove ca_file
config-store-password-unreadable = ({ $file }) cannot be read: { $reason }
config-store-password-not-file = ({ $file }) is not a file
config-store-password-mode = ({ $file }) has mode { $mode }: the password must be readable by its owner only (chmod 600 { $file })
config-store-password-owner = ({ $file }) belongs to user number { $owner }, not to the one running the gateway (number { $user }): chown { $user } { $file }
config-store-password-empty = ({ $file }) is empty: write the PostgreSQL user's password in it
config-store-password-not-text = ({ $file }) is not a password: UTF-8 text of at most 4 KiB is expected
config-store-key-mode = ({ $file }) has mode { $mode }: the keys must be readable by their owner only (chmod 600 { $file })
config-store-key-not-text = ({ $file }) is not a key file: one key of 64 hexadecimal characters per line is expected, at most 4 KiB
config-store-key-line = ({ $file }), line { $line }: this is not a key of 64 hexadecimal characters (32 bytes); make one with: openssl rand -hex 32
config-store-key-repeated = ({ $file }), line { $line }: this key is written on an earlier line already
config-store-key-empty = ({ $file }) holds no key: write a key of 64 hexadecimal characters in it (openssl rand -hex 32)
config-store-check-server = the PostgreSQL server answers: { $version }, synchronous_commit = { $synchronous_commit }
config-store-check-unusable = the PostgreSQL server cannot keep the register: { $detail }
config-store-check-password = register on PostgreSQL: { $url }, password read from { $file }
config-store-check-keys = keys sealing the devices' tokens read from { $file }: { $keys } (the first seals)
config-store-check-no-password = register on PostgreSQL: { $url }, no password (the server authenticates otherwise)
config-store-schema-up-to-date = the schema is at version { $version }, the one this program expects
config-store-schema-read-only = the schema is at version { $version }, but the role { $user } may not write the register: give it the service role's grants (docs/postgresql-service-role.sql, as a superuser)
config-store-schema-missing = the database has no schema yet: run "emcf-gateway store migrate" as the database's owner (a service started as its owner creates it itself; docs/postgresql.md)
config-store-schema-behind = the schema is at version { $applied }, this program expects { $binary }: run "emcf-gateway store migrate" as the database's owner before starting it
config-store-schema-newer = the schema is at version { $applied }, newer than the { $binary } this program expects: a newer release of the gateway migrated it, and this one refuses to start on it
config-store-schema-unreadable = the schema cannot be used: { $detail }

## store import, store export (src/cli/store_commands.rs)
cli-store-migrated = Database schema brought up to date: version { $version } ({ $applied ->
    [one] { $applied } migration applied
   *[other] { $applied } migrations applied
}).
cli-store-migrated-already = The database's schema is up to date already (version { $version }): nothing was changed.
cli-store-needs-database = "emcf-gateway store { $command }" moves a register to or from the PostgreSQL database of the [store] table, but the configuration names none: add [store] url (or the variable EMCF_STORE_URL)
cli-store-no-register = { $dir } holds no register (no journal/journal.log)
cli-store-database-not-empty = the PostgreSQL database is not empty: it holds organizations or events already. An import copies a register into a new database only; nothing was written
cli-store-dir-not-empty = { $dir } is not empty: an export writes a new register into an empty or missing directory
cli-store-not-imported = nothing was imported from { $dir }: the transaction was rolled back, the database stayed empty
cli-store-differs = the two registers do not give the same answers after the copy:
    { $differences }
    Do not serve from this copy: after an import, create the database again before trying again (docs/postgresql.md); after an export, remove the directory written.
cli-store-imported = Register of { $dir } imported into PostgreSQL ({ $records } journal records):
    organizations: { $organizations }, API keys: { $keys }, dashboard tokens: { $tokens }
    intents: { $intents } (abandoned: { $abandoned }), register entries: { $entries }, fiscal anomalies: { $anomalies }
cli-store-register-count = { $org }, { $environment ->
    [sandbox] sandbox
   *[other] production
} register: { $entries ->
    [one] { $entries } entry
   *[other] { $entries } entries
}
cli-store-checked = Checked, the same in both registers: each of the { $entries } entries, the quota used in { $years } organization year(s), the { $open } open intent(s), the keys, the tokens, the boxes' counters and the fiscal anomalies; { $chains } hash chain(s) recomputed in PostgreSQL.
cli-store-exported = Register of PostgreSQL exported into { $dir }: { $records } records in the new journal, verified, of which { $entries } register entries.
cli-store-renumbered = { $count } intent(s) written in PostgreSQL itself (not by an import) got another number in the new journal: the "intent" field of their entries changes (docs/postgresql.md); register numbers, DEF codes, counters and invoices are unchanged.
store-move-difference = { $what }: { $here } in the embedded register, { $there } in PostgreSQL
store-move-more = and { $count } more difference(s)
store-move-organizations = the organizations
store-move-keys = the API keys of { $org }
store-move-tokens = the dashboard tokens of { $org }
store-move-count = the number of entries of { $org } in the { $environment ->
    [sandbox] sandbox
   *[other] production
} register
store-move-length = the length of the { $environment ->
    [sandbox] sandbox
   *[other] production
} register
store-move-entry = entry { $sequence } of the { $environment ->
    [sandbox] sandbox
   *[other] production
} register
store-move-quota = the quota used by { $org } in { $year }
store-move-open-intents = the open intents
store-move-boxes = the boxes' counters
store-move-anomalies = the fiscal anomalies
store-move-verify = the verification of the register in PostgreSQL (log verify)
store-move-verified = the number of entries verified in PostgreSQL
store-move-renumbered-entry = entry { $sequence } of the { $environment ->
    [sandbox] sandbox
   *[other] production
} register would be number { $written } in the new journal: export stopped
store-move-entry-without-intent = entry { $sequence } of the { $environment ->
    [sandbox] sandbox
   *[other] production
} register names intent { $intent }, which PostgreSQL does not hold

## device add, update, remove, list; store rotate-key (src/cli/stored_devices.rs)
cli-device-embedded = the register is embedded (no [store] url): its devices are the configuration file's [[devices]] blocks, changed before the service is restarted. Keeping a device as data (device add, update, remove, list) needs a register in PostgreSQL (docs/postgresql.md)
cli-device-no-key = [store] secret_key_file is not set: a device's token is kept only sealed, under a key of that file (a line of 64 hexadecimal characters: openssl rand -hex 32; mode 600, docs/configuration.md)
cli-device-token-unreadable = the token file { $file } cannot be read
cli-device-kind-box = a box (kind = "box") stays a [[devices]] block of the configuration of the replica it is plugged into: only web API e-MCFs (--kind web_api) are kept in the register
cli-device-kind-unknown = "{ $kind }" is not a kind of device kept in the register: web_api is expected
cli-device-added = Device "{ $device }" kept in the register, its token sealed by key { $key }. Every running replica uses it within seconds; give it an organization: emcf-gateway org add --device { $device }
cli-device-update-nothing = nothing to change: give --url, --token-file or both
cli-device-updated = Device "{ $device }" changed (token sealed by key { $key }): new invoices go through it within seconds, those under way finish as they started
cli-device-removed = Device "{ $device }" removed from the register: no replica gives it a new invoice any more
cli-device-list-none = no device is kept in the register (emcf-gateway device add)
cli-device-list-header = NAME | KIND | KEY | CHANGED | URL
cli-store-key-rotated = { $count ->
    [0] No token to seal again: every one is sealed by key { $key } already.
    [one] { $count } token sealed again by key { $key }.
   *[other] { $count } tokens sealed again by key { $key }.
} Once every replica runs with this key first, the old line can be removed from the file.
cli-check-devices-kept = { $count ->
    [one] no [[devices]] in this file; the web API e-MCF kept in the database certifies: { $names } (emcf-gateway device list)
   *[other] no [[devices]] in this file; the { $count } web API e-MCFs kept in the database certify: { $names } (emcf-gateway device list)
}
