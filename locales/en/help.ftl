# help
# The CLI's --help (src/cli/help.rs). Ids follow the clap tree: help-<command path> for a
# command, help-<command path>--<argument> for an argument (help--<argument> for the global
# ones), help-value-<placeholder> for a value placeholder. The same ids in locales/fr and
# locales/en; a test fails on a command or an argument without its text.

## clap's own words
help-usage = Usage:
help-commands = Commands
help-options = Options
help-arguments = Arguments
help-value-command = COMMAND
help-print-help = Print help
help-print-version = Print version
help-help = Print this message or the help of the given subcommand(s)
help-help-command = Print the help of this command
help-possible-values = { $help } (possible values: { $values })
help-default = { $help } (default: { $value })

## clap's refusals
usage-missing-value = { $arg } needs a value
usage-repeated = { $arg } may be given only once
usage-invalid-value = "{ $value }" is not a valid value for { $arg }
usage-invalid-value-among = "{ $value }" is not a valid value for { $arg } (possible values: { $valid })
usage-value-refused = "{ $value }" is not a valid value for { $arg }: { $why }
usage-not-accepted = it is not accepted
usage-whole-number = a whole number is expected
usage-number-too-large = this number is too large
usage-intent-id = { $why } (see "emcf-gateway intent list")
usage-anomaly-id = { $why } (see "emcf-gateway device anomalies list")
usage-unknown-argument = unexpected argument { $arg }
usage-unknown-subcommand = unknown command "{ $name }"
usage-no-equals = { $arg } takes its value after an equals sign (=)
usage-too-many-values = too many values for { $arg } ("{ $value }")
usage-wrong-number-of-values = wrong number of values for { $arg }
usage-conflict = { $arg } cannot be used with { $other }
usage-missing-argument = required arguments missing: { $arg }
usage-missing-subcommand = "{ $name }" needs a command
usage-invalid-utf8 = an argument is not valid UTF-8 text
usage-other = the command line cannot be read ({ $detail })
usage-did-you-mean = { $text } (did you mean { $suggested }?)
usage-try-help = For more, try --help.

## placeholders
help-value-file = FILE
help-value-dir = DIR
help-value-lang = LANG
help-value-addr = ADDR
help-value-address = ADDRESS
help-value-id = ID
help-value-name = NAME
help-value-nif = NIF
help-value-isf = ISF
help-value-plan = PLAN
help-value-quota = QUOTA
help-value-device = DEVICE
help-value-org = ORG
help-value-label = LABEL
help-value-after = AFTER
help-value-limit = LIMIT
help-value-sequence = SEQUENCE
help-value-rn = RN
help-value-format = FORMAT
help-value-separator = SEPARATOR
help-value-from = FROM
help-value-to = TO
help-value-by = BY
help-value-note = NOTE
help-value-intent = INTENT
help-value-code-def = CODE_DEF
help-value-qr-code = QR_CODE
help-value-counters = COUNTERS
help-value-amount = AMOUNT
help-value-nim = NIM
help-value-date-time = DATE_TIME

## emcf-gateway
help = Certifies invoices with the DRC e-MCF fiscal device for ERPs on the shop LAN
help--config = Configuration file (default: $EMCF_CONFIG, else /etc/emcf-gateway/config.toml if it exists, else built-in defaults with the embedded simulator)
help--state_dir = State directory: journal, index, admin socket (overrides the file and $EMCF_STATE_DIR)
help--lang = Language of the messages and of this help: fr (default) or en (overrides $EMCF_LANG and the file's language)

help-serve = Run the gateway: HTTP API, device links, admin socket
help-serve--listen = Address to listen on (overrides the file and $EMCF_LISTEN): an address or a host name, and a port: 0.0.0.0:8080, localhost:8080, [::]:8080
help-serve--capture = Write every byte both ways on every device's port to this file, with monotonic timestamps (the wire capture format of docs/install.md; readable by its owner only)

help-org = Organizations
help-org-add = Create an organization (refused if its id exists: use org update); creates the register at its first use
help-org-add--id = Short id: a-z, 0-9, -
help-org-add--name = Display name
help-org-add--nif = Seller NIF (must equal the NIF of its device; checked with the device when the service runs)
help-org-add--isf = Seller ISF
help-org-add--plan = Plan: start or grow
help-org-add--quota = Annual quota overriding the plan's
help-org-add--device = Name of the configured device it certifies on; with no device configured, "embedded": the bundled simulator (nothing is fiscal)
help-org-add--admin_emails = An administrator's e-mail address for the alerts (repeatable)
help-org-add--max_invoice_total = The largest total (TTC, in CDF) one invoice may have; a larger one is refused (code 181). None by default
help-org-update = Change an organization: only the options given change
help-org-update--id = Organization id
help-org-update--name = Display name
help-org-update--nif = Seller NIF
help-org-update--isf = Seller ISF
help-org-update--plan = Plan: start or grow
help-org-update--quota = Annual quota overriding the plan's
help-org-update--plan_quota = Go back to the plan's quota
help-org-update--device = Name of the configured device
help-org-update--admin_emails = The administrators' e-mail addresses for the alerts (repeatable; replaces the list)
help-org-update--no_admin_email = Remove every administrator e-mail address
help-org-update--max_invoice_total = The largest total (TTC, in CDF) one invoice may have; a larger one is refused (code 181)
help-org-update--no_max_invoice_total = Remove the largest invoice total: any total is accepted again
help-org-list = List organizations
help-org-list--json = Print JSON (for scripts)
help-org-show = Show an organization and its quota use this year
help-org-show--id = Organization id
help-org-show--json = Print JSON (for scripts)

help-key = API keys
help-key-issue = Issue a key; it is printed once and never stored in clear
help-key-issue--org = Organization id
help-key-issue--sandbox = A sandbox key (mcf_test_) instead of a production key (mcf_live_)
help-key-issue--label = Free text to tell keys apart
help-key-list = List the keys of an organization
help-key-list--org = Organization id
help-key-list--json = Print JSON (for scripts)
help-key-disable = Disable a key: the next request with it gets 401
help-key-disable--id = Key id (as listed)
help-key-enable = Enable a key again
help-key-enable--id = Key id (as listed)

help-log = The LogInvoices register
help-log-list = List register entries
help-log-list--org = Only this organization's
help-log-list--sandbox = The sandbox register
help-log-list--after = Entries after this sequence number
help-log-list--limit = At most this many
help-log-list--json = Print JSON (for scripts)
help-log-show = Show one entry as an auditor reads it: the invoice it certified (client, items, payments, reference), its amounts per tax group, its security elements, and the credit notes that reduce it or the invoice it reduces; by sequence, or by --org and --rn
help-log-show--sequence = Sequence number (else --org and --rn)
help-log-show--org = The organization (with --rn)
help-log-show--rn = The invoice number (with --org)
help-log-show--sandbox = The sandbox register
help-log-show--json = Print JSON (for scripts): the entry as journaled, with certified_invoice, groups, original and credit_notes
help-log-export = Export the register to stdout
help-log-export--format = csv (comma-separated values with a header line) or json (one JSON object per line)
help-log-export--separator = CSV cell separator: comma (programs: decimal points) or semicolon (a French spreadsheet: decimal commas in amounts too)
help-log-export--bom = Start the CSV with a UTF-8 byte order mark (Excel then reads accents right)
help-log-export--org = Only this organization's
help-log-export--sandbox = The sandbox register
help-log-export--from = Only entries certified on or after this day (YYYY-MM-DD, in the configured time zone)
help-log-export--to = Only entries certified on or before this day (YYYY-MM-DD, in the configured time zone)
help-log-verify = Verify every record's CRC and the hash chain of the journal

help-index = The sled index (a projection of the journal)
help-index-rebuild = Accept the journal as it is and rebuild the index from it, when the index is ahead of the journal or disagrees with it; the old index is kept aside (index.sled.stale-<time>). Only after checking the journal against a backup: entries missing from it stay lost. An index that agrees with the journal is left as it is (and said so) unless --force
help-index-rebuild--force = Rebuild even an index that agrees with the journal (the old one is kept aside)
help-store = Move a register between the embedded store and PostgreSQL
help-store-migrate = Create or upgrade the schema of the PostgreSQL database of [store], as the database's owner (the service's role then starts without changing it)
help-store-import = Copy the embedded register of a state directory (the service stopped) into the empty PostgreSQL database of [store], then check that both give the same answers; exit 1 on any difference
help-store-import--from_state_dir = The state directory holding the register (journal/journal.log)
help-store-export = Write the register of the PostgreSQL database of [store] into a new embedded register, in an empty or missing directory, then verify it and compare both; exit 1 on any difference
help-store-export--to_state_dir = The new state directory

help-dashboard-token = Dashboard sign-in tokens of organization admins
help-dashboard-token-issue = Issue a token for an organization's admin; it is printed once and never stored in clear
help-dashboard-token-issue--org = Organization id
help-dashboard-token-issue--label = Free text: whose token it is
help-dashboard-token-list = List the dashboard tokens of an organization
help-dashboard-token-list--org = Organization id
help-dashboard-token-list--json = Print JSON (for scripts)
help-dashboard-token-revoke = Revoke a token: it signs in no more and its open sessions end
help-dashboard-token-revoke--id = Token id (as listed)

help-device = Fiscal boxes: probe one (technicians), and the fiscal anomalies of their counters; web API e-MCFs kept in the PostgreSQL register (add, update, remove, list)
help-device-probe = Read everything a box says of itself (identity, NIF, rates, counters, last invoice, link with the DGI, taxpayer fields) and what differs from PROTOCOL.md, in plain words; read-only; through the running service, or on the port when the service is stopped
help-device-probe--device = The configured device (default: the only one)
help-device-probe--capture = Also write every byte both ways to this file (wire capture; service stopped only)
help-device-probe--json = Print the report as JSON (its words in English, for scripts)
help-device-anomalies = Fiscal anomalies: a box whose counter went back or whose NIF changed, or a register behind its box
help-device-anomalies-list = List them (acknowledged or not)
help-device-anomalies-list--json = Print JSON (for scripts)
help-device-anomalies-ack = Acknowledge one: journaled with who and why; it leaves the dashboard and /metrics
help-device-anomalies-ack--id = Its id (as listed)
help-device-anomalies-ack--by = Who acknowledges it
help-device-anomalies-ack--note = Why it is understood (e.g. "memory replaced by the DGI, report 2026-114")

help-intent = Invoices in doubt: listed, and settled by an administrator when the channel cannot tell (a web API confirm whose answer was lost); through the running service
help-intent-list = The open intents: those being settled with their channel, and those waiting for an administrator, with why
help-intent-list--json = Print JSON (for scripts)
help-intent-resolve = Settle an intent that waits for an administrator, from what the DGI's portal shows: --certified with its security elements, or --not-certified; journaled with who
help-intent-resolve--intent = The intent's id (as listed)
help-intent-resolve--certified = The DGI's portal shows it certified: give its elements below
help-intent-resolve--not_certified = The DGI's portal does not show it: the rn may be certified again
help-intent-resolve--code_def = codeDEFDGI, as the portal shows it
help-intent-resolve--qr_code = The QR code's text
help-intent-resolve--counters = Counters, e.g. "5/8 FV"
help-intent-resolve--nim = The e-MCF's NIM
help-intent-resolve--date_time = Date-time of the certification, YYYY-MM-DDTHH:MM:SS (for example 2026-11-23T10:00:00)
help-intent-resolve--by = Who settles it (journaled)
help-intent-resolve--note = Where it was read, why (journaled)

## config check
help-config = The configuration as serve reads it, and what it names
help-config-check = Check the configuration as serve would read it, then the state directory, each device (read-only), the token and password files and, with --smtp, the relay: one line per check, each problem with its fix; exit status 1 on any error
help-config-check--smtp = Also connect to the [smtp] relay and log in (no message is sent)
help-config-check--json = Print the checks as JSON

## notice
help-value-date = DATE
help-value-text = TEXT
help-value-version = VERSION
help-notice = Change notices to every organization: e-mailed, shown on the dashboards, and in the headers of an API version they retire
help-notice-add = Publish a change notice: at least 30 days ahead, e-mailed once to every organization's administrators, a banner on their dashboards until the date
help-notice-add--effective = The day the change takes effect, YYYY-MM-DD (its first second, in the gateway's time zone, at least 30 full days from now)
help-notice-add--subject = The notice's subject, one line
help-notice-add--body_file = A UTF-8 text file holding the notice's text, as it is to be read
help-notice-add--retires = The API version the change retires (v1): its answers then carry the Deprecation, Sunset and Link headers
help-notice-list = The change notices and their e-mails, sent or pending, per organization
help-notice-list--json = Print JSON (for scripts)

## backup
help-backup = Write a verified copy of the register, the state and the configuration (while the service runs or not), keep the last [backup] keep, then run [backup] command
help-backup--dest = Where the copy goes (default: [backup] dir)
help-restore = Put a copy back into the state directory, the service stopped; refused over a register the copy does not hold entirely unless --force
help-restore--src = The copy's folder (emcf-backup-<time>)
help-restore--force = Restore over a register with invoices the copy lacks (it is kept aside)
help-value-dest = DEST
help-value-src = SRC

## backup (restore --config-in-place, backup verify)
help-restore--config_in_place = Put the configuration files back at the paths the current configuration names (its own file and the files it names); the others stay beside the state
help-backup-verify = Check a copy against its manifest, read-only (for an auditor): every file's length and SHA-256, the journal read again to its head and counts; exit 1 on any mismatch
help-backup-verify--dir = The copy's folder (emcf-backup-<time>)

# A register behind its box (issue 27)
help-device-anomalies-ack--numbers = A register behind its box: the missing certifications' numbers, as listed (e.g. "7-9, 12"); required for that kind of anomaly, refused for the others
help-value-numbers = NUMBERS
help-device-anomalies-ack--rn = A missing certification's rn, as the DGI's portal shows it: NUMBER=RN (repeatable). That rn is never certified again for the device's organizations; a missing number whose rn is not known would be certified again if its invoice were retried under its old rn
help-device-add = Keep a web API e-MCF in the PostgreSQL register, its token sealed: every replica uses it within seconds, no restart
help-device-add--name = The device's name (organizations' --device)
help-device-add--kind = Its kind: web_api (a box stays in the [[devices]] of its replica's file)
help-device-add--url = The API base, http(s)://host[:port][/prefix]
help-device-add--token_file = The file holding the e-MCF's token (read once, then kept sealed)
help-device-update = Change the URL or the token of a device kept in the register
help-device-update--name = The device's name
help-device-update--url = The new API base
help-device-update--token_file = The file holding the new token
help-device-remove = Remove a device kept in the register (refused while an organization or an open intent uses it)
help-device-remove--name = The device's name
help-device-list = List the devices kept in the register (never their tokens)
help-device-list--json = Print JSON (for scripts)
help-store-rotate-key = Seal every device token kept in the register again with the first key of [store] secret_key_file, in one transaction
help-value-kind = KIND
help-value-url = URL
help-value-number-rn = NUMBER=RN
