# Words shared by several areas (API, dashboard, CLI).
# The same ids, with the same variables, in locales/fr and locales/en.

yes = yes
no = no
environment-production = production
environment-sandbox = sandbox

# Used by the catalogue's own tests (src/i18n/catalogue.rs).
test-greeting = Hello, { $name }
test-count = { $n ->
    [one] { $n } invoice
   *[other] { $n } invoices
}

## the QR code of a certification (receipts, dashboard)
qr-not-drawn = The QR code could not be drawn from the qrCode text; the text is given below.

## Who recorded a register entry (its source): the dashboard's invoice page, log show (src/i18n/names.rs)
recorded-by = Recorded by
recorded-by-device = the device, when certifying the invoice
recorded-by-reconciled = the device, read back after an interruption (restart or power cut)
recorded-by-administrator = { $name } (administrator), from the DGI's portal{ $dashboard ->
    [yes] , on the dashboard
   *[other] {""}
}
recorded-by-with-note = { $who }: { $note }
recorded-by-other = { $source }

## Documents, named by their type (the seed's type table): receipts, dashboard, CLI
invoice-type-fv = Sales invoice
invoice-type-ft = Down payment invoice
invoice-type-fa = Credit note
invoice-type-ev = Export sales invoice
invoice-type-et = Export down payment invoice
invoice-type-ea = Export credit note
invoice-type-other = Invoice { $code }

## The currency of an invoice or a payment: amounts are always in CDF
invoice-currency-converted = { $currency } (amounts in CDF; { $rate }, rate of { $date })
payment-paid-in-worth = paid in { $currency }: { $worth }
payment-paid-in = paid in { $currency }
## the operating system's refusals (src/i18n/mod.rs): said after what failed; its own text as a detail
io-not-found = no such file or directory (system: { $detail })
io-permission-denied = permission denied: this account may not do it (system: { $detail })
io-addr-in-use = the address is already in use by another program, perhaps another gateway (system: { $detail })
io-addr-not-available = this machine has no such address (system: { $detail })
io-already-exists = it exists already (system: { $detail })
io-connection-refused = the connection was refused (system: { $detail })
io-timed-out = it took too long (system: { $detail })
io-storage-full = the disk is full (system: { $detail })
io-read-only = the file system is read-only (system: { $detail })
io-is-a-directory = it is a directory, not a file (system: { $detail })
io-not-a-directory = a part of the path is not a directory (system: { $detail })
io-other = the system refused (system: { $detail })

## a fiscal anomaly of a box (src/model/anomaly.rs)
anomaly-counter-went-back = its invoice counter went back
anomaly-nif-changed = it reports another taxpayer NIF

## the register's errors (src/store/error.rs)
store-io = the register could not be read or written: { $reason }
store-locked = another gateway process uses this state directory
store-damaged = the register is damaged at { $at }: it is not changed until an operator restores journal/journal.log from a backup (or runs "emcf-gateway index rebuild" if only the index disagrees) (technical detail: { $detail })
store-damage-at-seq = journal record { $seq }
store-damage-at-offset = byte { $offset } of the journal
store-damage-at-file = the journal file
store-damage-at-database = the register in PostgreSQL
store-index = the register's index failed (technical detail: { $detail })
store-conflict = the register refused a change that contradicts it (technical detail: { $detail })
store-unknown-intent = no intent { $id }
store-intent-not-open = intent { $id } is not open: it was already certified or abandoned
store-unknown-key = no API key "{ $id }"
store-unknown-organization = no organization "{ $id }"
store-invalid = the register refused the record (technical detail: { $detail })
store-json = a record of the register could not be encoded or read (technical detail: { $detail })
store-halted = the register takes no more writes after a write failure: restart the gateway (technical detail: { $detail })
store-database-unreachable = the register's PostgreSQL server does not answer: try again in a few seconds, certification resumes by itself once it answers (technical detail: { $detail })
store-database = the register's PostgreSQL server refused an operation (technical detail: { $detail })
store-quota-exhausted = the annual quota of organization "{ $org }" is used up
store-fenced = this gateway process may no longer write to the register: another replica took its work over (technical detail: { $detail }); it stops, and its service restarts it
store-devices-in-file = the embedded register keeps no device: its devices are the configuration file's [[devices]] blocks. Devices kept as data (emcf-gateway device add) need a register in PostgreSQL ([store] url)
store-unknown-device = no device "{ $device }" is kept in the register (emcf-gateway device list)
store-device-exists = a device "{ $device }" is kept in the register already: change it with emcf-gateway device update
store-device-in-use = device "{ $device }" is still used: organizations certifying on it: { $organizations }; open intents: { $intents }. Move those organizations to another device (emcf-gateway org update --device) and settle those intents first
store-device-sealed = the token of device "{ $device }" cannot be opened or sealed: { $detail }

## administration (src/admin): the CLI and the dashboard
admin-socket-failed = the running service's admin socket failed (technical detail: { $detail })
admin-socket-denied = this account may not use the running service's admin socket { $path } (its owner only): run the command as the service's user, e.g. sudo -u emcf-gateway emcf-gateway ...
admin-service-said = { $text }
admin-internal = internal error of the gateway (technical detail: { $detail })
admin-bad-request = the running service could not read the request (technical detail: { $detail })
admin-no-channel = this service has no certification channel
admin-not-a-service-request = not a request of the running service: { $op }
admin-nif-taken = organization "{ $other }" already certifies NIF { $nif } on device "{ $device }": one NIF, one organization per device
admin-register-in-database = the register is in PostgreSQL: it is backed up with its database (pg_dump, or a base backup with its WAL), not by the gateway; see docs/postgresql.md
admin-no-entry = no entry { $sequence } in the { $environment ->
    [sandbox] sandbox
   *[production] production
} register
admin-no-entry-here = no entry { $sequence } of this organization in the { $environment ->
    [sandbox] sandbox
   *[production] production
} register
admin-no-entry-rn = no invoice "{ $rn }" of organization "{ $org }" in the { $environment ->
    [sandbox] sandbox
   *[production] production
} register
admin-no-organization = no organization "{ $id }"
admin-no-token = no dashboard token "{ $id }"
admin-no-key-here = no API key "{ $id }" in this organization
admin-ack-needs-who-and-why = say who acknowledges the anomaly (--by) and why (--note)
admin-bad-org-id = the organization id "{ $id }" is not valid: 1 to 32 characters among a-z, 0-9 and -
admin-bad-identity-field = the { $name } "{ $value }" is not valid: 1 to 20 printable ASCII characters, without , ; : & < > ^
admin-bad-emails = the administrators' e-mail addresses: at most { $max }, each like name@example.cd
admin-empty-name-or-device = the organization's name and device must not be empty
admin-device-token-empty = the token file is empty: paste the e-MCF's token from the DGI portal into it
admin-device-token-malformed = the token file holds characters an HTTP header cannot carry (a line break inside?)
admin-device-bad-name = "{ $device }" cannot name a device: 1 to 64 characters among a-z, 0-9, "-" and "_", not starting with "-" or "_"
admin-device-reserved-name = the device name "{ $device }" is reserved: "embedded" and names starting with "sandbox-" are the bundled simulators'
admin-device-in-file = a [[devices]] block of the configuration file is named "{ $device }" already: choose another name
admin-device-bad-url = "{ $url }" is not the address of an API: http://... or https://... is expected
admin-bad-max-invoice-total = the largest invoice total { $value } is not valid: an amount in CDF above 0, with at most 2 decimals, at most { $max }
admin-entry-by-sequence-or-rn = name an entry by its sequence number, or by --org and --rn
admin-probe-needs-service = a device is probed by the running service (or by the CLI on its port when the service is stopped), not on the register
admin-nif-needs-service = what a device last said of its NIF is known by the running service only, not by the register
admin-intents-need-service = invoices in doubt are listed and settled by the running service (it asks the channels): start it, then run the command again

## a box's link (src/device): what a person reads; the link's own text as a detail
device-unavailable = the device is not available (technical detail: { $detail })
device-queue-full = the device's queue is full: try again in a moment
device-no-answer = the device did not answer command { $command }
device-disconnected = the link with the device was lost
device-outcome-unknown = the outcome of the finalization (38h) is unknown: the gateway settles it with the device
device-unreadable-state = the box's state (C1h) cannot be read (technical detail: { $detail })
device-bad-reply = the reply to command { $command } cannot be read (technical detail: { $detail })
device-not-sent = the command was not sent: it does not fit a frame (technical detail: { $detail })
device-shutting-down = the device link is shutting down
device-blocked-state = its state (C1h) cannot be read: { $detail }
device-blocked-memory-full = its fiscal memory is full (status bit S2.1)
device-blocked-dgi-overdue = it has not reached the DGI server for too long (status bit S3.0)

## Whom an organization's administrator asks for a plan, a quota, a dashboard token or help:
## the one who runs the gateway (e-mails, dashboard, API texts say it with this term).
-gateway-operator = the gateway's operator

## Why a configured device cannot certify now (src/certify/mcf/readiness.rs, src/certify/edef/health.rs):
## the dashboard's technical details; the log says them in English
problem-box-down = the box does not answer (technical detail: { $detail })
problem-box-not-connected-yet = the box is not connected yet
problem-box-blocked = the box answers but { $why }
problem-box-nif-mismatch = the box is personalized for NIF { $nif }, not the NIF of organization { $organizations }: fix the organization's NIF or its device binding
problem-box-settling = an earlier invoice is being settled with the box
problem-dgi-token-rejected = the DGI web API rejects the token: { $why }
problem-dgi-down = the DGI web API does not answer (technical detail: { $detail })
problem-dgi-not-reached-yet = the DGI web API has not been reached yet
problem-dgi-blocked = the DGI says this e-MCF cannot certify now (status false)
problem-dgi-nif-mismatch = the token is for the e-MCF of NIF { $nif }, not the NIF of organization { $organizations }: fix the organization's NIF or install this e-MCF's token
problem-dgi-settling = an earlier invoice is being settled with the DGI

## Issue 24 (safety): a name or label an administrator types is one plain line people read as
## it is written, in tables, pages and e-mail subjects (src/admin/mod.rs `check_name`)
admin-bad-name = { $field ->
        [key-label] the key's label
        [token-label] the token's label
       *[org-name] the organization's name
    } { $fault ->
        [too-long] is { $length } characters long, { $max } at most
        [hidden] contains { $kind ->
            [lf] a line feed
            [cr] a carriage return
            [tab] a tab
            [layout] an invisible mark that changes the writing direction or breaks the line
           *[other] a control character
        } (U+{ $char }) at character { $position }: it must be one line, read as it is written
       *[encoded-word] contains "=?", the start of an e-mail encoded word (RFC 2047): a mail client would show something other than what is written
    }

## backup (a restore that did not finish, src/store/embedded/open.rs)
store-restore-unfinished = a restore into { $dir } did not finish: this state directory is not opened until it is. Run the same "emcf-gateway restore" command again (with the same copy): it resumes without losing anything; what was there before is kept in { $dir }/before-restore-*

# A register behind its box (issue 27)
anomaly-register-behind = it certified invoices the register does not hold: the register is behind it
problem-register-behind = { $channel ->
    [web_api] the DGI web API's e-MCF
   *[other] the box
} certified invoices the gateway's register does not hold (counters no. { $missing }): the register was restored from an older copy or lost its last records. Nothing more is certified on this device until an administrator restores a newer copy of the register or acknowledges the missing certifications with: emcf-gateway device anomalies ack { $anomaly } --numbers "{ $missing }" --by "YOUR NAME" --note "WHY"
admin-ack-no-numbers-here = --numbers is only for a register behind its box; this anomaly has none
admin-ack-numbers-differ = this anomaly's missing certifications are no. { $missing }; you gave { $given }. Give exactly these numbers, after checking each on the DGI's portal: emcf-gateway device anomalies ack { $anomaly } --numbers "{ $missing }" --by "YOUR NAME" --note "WHY"
admin-ack-rn-not-missing = --rn { $number }={ $rn }: give a non-empty rn for one of this anomaly's missing numbers (no. { $missing })
admin-ack-rn-differs = --rn { $number }={ $rn }: the box's own state names { $known } as its certification no. { $number }; check on the DGI's portal
