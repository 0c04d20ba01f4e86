# The organization dashboard (src/dashboard). Ids prefixed with dash-.
# The same ids, with the same variables, in locales/fr and locales/en (src/i18n/catalogue.rs tests).

## Page frame

dash-brand = e-MCF gateway
dash-subtitle = organization dashboard
dash-lang-switch = Language
dash-nav-overview = Overview
dash-nav-keys = API keys
dash-nav-invoices = Invoices
dash-nav-sign-out = Sign out
dash-back-overview = Back to the overview
dash-back-keys = Back to the keys
dash-never = never

## Errors

dash-err-busy-title = Busy
dash-err-busy = The dashboard is answering too many requests just now. Try again in a moment.
dash-err-not-found-title = Not found
dash-err-no-such-page = There is no such page in the dashboard.
dash-err-not-found = What you asked for does not exist in your organization.
dash-err-no-entry = Your organization has no invoice No. { $sequence } in its { $register ->
    [sandbox] sandbox
   *[other] production
} register.
dash-err-method-title = Method not allowed
dash-err-method = This page does not accept that kind of request.
dash-err-not-possible-title = Not possible
dash-err-unavailable-title = Temporarily unavailable
dash-err-unavailable = The gateway could not read or write its register just now. Try again in a moment; if it persists, tell { -gateway-operator }.
dash-err-csrf-title = Request refused
dash-err-csrf = This form was not sent from this dashboard's own page, or the page was too old (security check failed). Go back, reload the page and try again.
dash-err-form-type-title = Unsupported form
dash-err-form-type = This form was not sent the way a page of this dashboard sends it. Go back, reload the page and try again.
dash-err-form-large-title = Form too large
dash-err-form-large = The form is larger than this page accepts.
dash-err-form-slow-title = Form too slow
dash-err-form-slow = The form arrived too slowly. Send it again.
dash-err-form-cut-title = Form unreadable
dash-err-form-cut = The form could not be read (cut off). Send it again.

## Sign-in

dash-sign-in-title = Sign in
dash-signin-intro = Sign in with the dashboard token { -gateway-operator } gave you.
dash-signin-operator = For { -gateway-operator }
dash-signin-operator-how = A token is made on the gateway's server with:
dash-signin-token = Dashboard token
dash-signin-submit = Sign in
dash-signin-expired = Your session has expired or was ended. Please sign in again.
dash-signin-lost-at-restart = The gateway restarted and could not take back the sessions open before: please sign in again.
dash-signin-not-kept = The gateway cannot save sessions just now: if it restarts, you will have to sign in again. Tell { -gateway-operator }.
dash-signin-signed-out = You are signed out.
dash-signin-foreign = This sign-in form was not sent from this dashboard.
dash-signin-cookie = This sign-in form is no longer valid: the page was opened more than an hour ago, the gateway restarted since, or your browser refuses this site's cookies. Reload the page (allow cookies for this site if needed), then sign in.
dash-signin-empty = Type or paste your dashboard token.
dash-signin-invalid = This dashboard token is not valid: it may be mistyped or cut, or it was revoked. Paste it again in full, or ask { -gateway-operator } for a new one.
dash-signin-whose-address = this address
dash-signin-whose-org = this organization
dash-signin-throttled = Too many sign-ins with a wrong token from { $whose }. Wait { $seconds } s, then paste the token again in full.

## Overview

dash-overview-title = Overview
dash-settled-certified = The invoice in doubt is settled as certified, with your name in the register: the ERP's next try of its number gets its elements.
dash-settled-not-certified = The invoice in doubt is settled as not certified, with your name in the register: the ERP may send it again.
dash-org-title = Organization
dash-org-name = Name
dash-org-id = Id
dash-org-plan = Plan
dash-plan = { $plan ->
    [grow] Grow
   *[other] Start
}
dash-quota-title = Quota { $year }
dash-quota-used = { $used } of { $quota } production invoices used, { $n_left ->
        [one] { $left } left
       *[other] { $left } left
    } this year
dash-quota-sandbox = Sandbox invoices never count.
dash-devices-title = Devices
dash-device-register = Register
dash-device-state = State
dash-device-since = Since
dash-device-last-reply = Last reply from the device
dash-device-queued = Invoices waiting
dash-register-production = Production
dash-register-sandbox = Sandbox
dash-link-connected = answering
dash-link-disconnected = not answering
dash-link-not-configured = not configured
dash-link-unused = not used yet
dash-link-unused-hint = started at the first test invoice
dash-device-not-ready = Invoices cannot be certified now: { $channel ->
    [web_api] { $code ->
        [link_down] the DGI's online service does not answer.
        [box_blocked] the DGI says your e-MCF cannot certify for now.
        [nif_mismatch] the token installed is for another NIF than your organization's; { -gateway-operator } must install your e-MCF's token or correct the NIF.
        [settling] the gateway is first settling an earlier invoice with the DGI.
        [token_rejected] the DGI refuses the gateway's access; { -gateway-operator } must install a new token.
       *[other] the DGI's online service is not ready.
    }
   *[box] { $code ->
        [link_down] the device does not answer.
        [box_blocked] the device answers, but refuses to certify for now.
        [nif_mismatch] the device is registered for another NIF than your organization's; { -gateway-operator } must correct the NIF or the device.
        [settling] the gateway is first settling an earlier invoice with the device.
        [token_rejected] the DGI refuses the gateway's access; { -gateway-operator } must install a new token.
       *[other] the device is not ready.
    }
}
dash-alert-quota = { $percent }% of the { $year } annual quota is used ({ $used } invoices of { $quota }).
dash-alert-quota-full = The { $year } annual quota is reached ({ $used } invoices of { $quota }): new invoices are refused. { $plan ->
    [start] Ask { -gateway-operator } for the Grow plan to go on certifying.
   *[other] Ask { -gateway-operator } to raise the quota to go on certifying.
}
dash-alert-channel-down = { $channel ->
    [web_api] The DGI's online service has not answered since { $since }: no invoice can be certified.
   *[box] The production device has not answered since { $since }: no invoice can be certified.
}
dash-alert-channel-down-no-date = { $channel ->
    [web_api] The DGI's online service does not answer: no invoice can be certified.
   *[box] The production device does not answer: no invoice can be certified.
}
dash-alert-dgi-contact = The last exchange of the production device with the DGI was on { $at }: check its network connection.
dash-alert-dgi-contact-never = The production device has never exchanged with the DGI yet: check its network connection.
dash-alert-in-doubt = { $count ->
    [one] One invoice is in doubt (its outcome is unknown).
   *[other] { $count } invoices are in doubt (their outcome is unknown).
} { $waiting ->
    [0] { $count ->
        [one] The gateway is still settling it by itself.
       *[other] The gateway is still settling them by itself.
    }
    [one] The one waiting for your decision is under "Invoices in doubt" below.
   *[other] Those waiting for your decision are under "Invoices in doubt" below.
}
dash-reconciling = The gateway is settling an earlier invoice with this device; new invoices wait.
dash-anomaly-title = Fiscal anomaly
dash-anomaly-intro = The box contradicts what the register knows of it. Invoices are still certified (the box is the fiscal authority); tell { -gateway-operator }, who checks it with the DGI and acknowledges it.
dash-anomaly-item = No. { $id }, on { $at }: { $what } (in the register: NIF { $known_nif }, counter { $known_tc }; according to the device: NIF { $seen_nif }, counter { $seen_tc }).
dash-dgi-token-valid = The gateway's access to the DGI's online service is valid until { $until }.
dash-dgi-token-soon = It expires within 7 days: { -gateway-operator } must install a new token from the DGI portal.
dash-dgi-unknown = Last exchange of the device with the DGI: not known yet (the device has not told it since the gateway started).
dash-dgi-contact = Last exchange of the device with the DGI: { $at } (device time).
dash-dgi-state = { $state ->
    [CON] The device is connected to the DGI.
    [TRA] The device is sending invoices to the DGI.
    [DIS] The device is not connected to the DGI just now (normal between two sends).
   *[other] The state of its link with the DGI is not known (see the technical details).
}
dash-dgi-sent = { $n ->
    [one] It says it sent { $sent } invoice to the DGI.
   *[other] It says it sent { $sent } invoices to the DGI.
}
dash-dgi-error = It reports a problem with its link to the DGI (see the technical details).
dash-tech-title = Technical details
dash-tech-intro = For { -gateway-operator } or a technician: names and values as the devices and the protocol give them.
dash-tech-device = { $register ->
    [sandbox] Sandbox device
   *[other] Production device
}
dash-tech-link-error = { $register ->
    [sandbox] Last link error (sandbox)
   *[other] Last link error (production)
}
dash-tech-pending = Requests pending on the DGI web API (pending)
dash-tech-not-ready = Why it does not certify (log text)
dash-tech-token = DGI web API token valid until
dash-tech-c2h = Link with the DGI (C2h reply)
dash-tech-anomaly = Anomaly No. { $id }
dash-registers-title = Registers
dash-registers-invoices = Certified invoices:
dash-registers-production = { $n ->
        [one] { $count } in production
       *[other] { $count } in production
    }
dash-registers-sandbox = { $n ->
        [one] { $count } in the sandbox
       *[other] { $count } in the sandbox
    }
dash-registers-separate = the sandbox has its own register and never counts in the quota
dash-registers-keys = API keys:
dash-registers-keys-enabled = { $enabled } of { $total } enabled

## Invoices in doubt

dash-doubt-title = { $n ->
        [one] { $n } invoice in doubt
       *[other] { $n } invoices in doubt
    }
dash-doubt-intro = The DGI's answer to these confirmations was lost and the DGI no longer lists them as pending: whether they were certified is not known. Do not send them again under another number. Look each one up on the DGI's portal (by its number or its request's reference), then say here what the portal shows; the ERP's next try of the same number then gets the answer. They can also be settled by { -gateway-operator }.
dash-doubt-item = Invoice No. { $rn }, { $total }, received { $received }; reference of the request to the DGI: { $request }
dash-doubt-settle-rn = Settle invoice No. { $rn }
dash-doubt-portal = What the DGI's portal shows
dash-doubt-certified = Certified, with these elements:
dash-doubt-code = DEF/DGI code
dash-doubt-nim = Device number (NIM)
dash-doubt-qr = QR code (its text)
dash-doubt-counters = Counters (e.g. 12/345 FV)
dash-doubt-date = Date and time on the portal
dash-doubt-not-certified = Not certified: the portal shows no such invoice (the ERP may then send it again)
dash-doubt-by = Your name (journaled)
dash-doubt-note = Note
dash-doubt-submit = Settle
dash-doubt-not-settled-title = Not settled
dash-doubt-not-mine = This invoice is not in doubt for your organization (already settled?).
dash-doubt-need-date = Give the date and time the DGI's portal shows for it.
dash-doubt-say-outcome = Say what the DGI's portal shows: certified, or not certified.
dash-doubt-not-awaiting = This invoice is no longer waiting for a person: the gateway settled it, or someone else did.
dash-doubt-register-failed = The register could not take it: { $error }. Nothing was changed; try again.

## API keys

dash-keys-title = API keys
dash-key-id = Id
dash-key-environment = Environment
dash-key-label = Label
dash-key-created = Created
dash-key-enabled-heading = Enabled
dash-key-action = Action
dash-key-disable = Disable
dash-key-enable = Enable
dash-key-disabled = Key { $id } is disabled: requests made with it are now refused.
dash-key-enabled = Key { $id } is enabled again.
dash-keys-none = No API key yet.
dash-key-not-found = Your organization has no key { $id }.
dash-issue-legend = Issue a new API key
dash-issue-production = production (mcf_live_: the fiscal device, counts in the quota)
dash-issue-sandbox = sandbox (mcf_test_: the simulator, separate register)
dash-issue-placeholder = e.g. ERP till 2
dash-issue-submit = Issue key
dash-issue-choose-env = Choose production or sandbox.
dash-issued-title = API key issued
dash-issued = Key issued.
dash-issued-key = Key { $id } ({ $environment }):
dash-issued-copy = Copy it into the ERP now. The gateway keeps only a hash of it: it will never be shown again, and if it is lost, issue another and disable this one.
dash-toggle-say = Say whether to enable or disable the key.
dash-disable-title = Disable key { $id }?
dash-disable-question = Disable key { $id } ({ $label })? The tills using it will be refused at once.
dash-disable-question-unlabelled = Disable key { $id }? The tills using it will be refused at once.
dash-disable-undo = You can enable it again later on the keys page.
dash-disable-confirm = Disable the key
dash-disable-cancel = Cancel
dash-disable-already = Key { $id } is already disabled.

## LogInvoices

dash-invoices-title = Invoice register (LogInvoices)
dash-invoices-none = No invoice in this register matches.
dash-tab-production = Production register
dash-tab-sandbox = Sandbox register
dash-tabs-note = (the sandbox register is separate and never counts in the quota)
dash-search-legend = Search the { $register ->
    [sandbox] sandbox
   *[other] production
} register
dash-search-rn = Invoice number (rn)
dash-search-from = Certified from
dash-search-to = to
dash-search-submit = Search
dash-search-clear = Clear
dash-export = Export the { $register ->
    [sandbox] sandbox
   *[other] production
} register as CSV (the search's dates)
dash-page-newest = Newest
dash-page-older = Older →
dash-search-bad-title = Bad search
dash-search-bad-env = This register does not exist: choose the production register or the sandbox's.
dash-search-bad-date = Expected a date as YYYY-MM-DD, got "{ $value }".
dash-search-dates-reversed = The start date is after the end date.
dash-search-bad-before = This page link is not valid: go back to the newest invoices.
dash-export-bad-title = Bad export
dash-entry-sequence = No.
dash-entry-rn = Invoice No.
dash-entry-type = Type
dash-entry-total = Total TTC
dash-entry-code = DEF/DGI code
dash-entry-certified = Certified
dash-entry-device-time = Device time
dash-invoice-title = { $document } { $rn }
dash-invoice-back = { $register ->
    [sandbox] Sandbox register
   *[other] Production register
}
dash-security-title = Security elements
dash-qr-caption = The invoice's QR code
dash-field-code = DEF/DGI code
dash-field-nim = Device number (NIM)
dash-field-counters = Device counters
dash-field-device-time = Device date and time
dash-field-qr = QR code text
dash-invoice-section = Invoice
dash-field-register = Register
dash-field-sequence = Sequence
dash-field-seller = Seller NIF / ISF
dash-field-received = Received
dash-field-key = API key
dash-field-device = Device
dash-field-digest = Request digest (SHA-256)
dash-totals-title = Totals (from the device)
dash-field-total = Total TTC
dash-field-vat = VAT
dash-field-specific-tax = Specific tax
dash-field-usd = USD equivalent

## invoice page: the certified invoice (src/dashboard/invoice_page.rs)
dash-print = Print the fiscal block:
dash-print-a4 = A4 invoice
dash-print-80mm = 80 mm receipt
dash-content-title = Certified invoice (as sent)
dash-content-mode = Prices
dash-content-currency = Invoice currency
dash-content-operator = Operator
dash-content-client = Client
dash-content-no-client = no client on the invoice
dash-content-comments = Comments
dash-content-payments = Payments:
dash-content-no-payments = none sent (one ESPECES payment of the total was recorded)
dash-content-not-kept = This invoice's content is not kept: it was certified by 1.4.0 or before, which kept only its digest (above).
dash-content-unreadable = The kept content cannot be shown as the certified one: it does not match the entry's request digest, or this release cannot read it. Tell { -gateway-operator }, who runs "emcf-gateway log verify" (technical detail: { $reason }).
dash-item-name = Name
dash-item-type = Type
dash-item-group = Group
dash-item-quantity = Quantity
dash-item-price = Unit price (CDF)
dash-item-amount = Amount (CDF)
dash-item-specific-tax = specific tax { $amount }
dash-item-price-change = original price { $original } ({ $why })
dash-group = Group
dash-group-ht = HT (CDF)
dash-group-vat = VAT (CDF)
dash-group-ttc = TTC (CDF)
dash-credit-of = This credit note ({ $kind }) reduces the invoice
dash-credit-of-unknown = (not in this register: certified elsewhere or before the gateway)
dash-credit-notes-title = Credit notes that reduce this invoice
dash-export-json = as JSON
dash-export-bad-format = The export format must be csv, excel or json.

## The register: its export for a spreadsheet (src/dashboard/invoices.rs)
dash-export-excel = CSV for Excel
dash-export-excel-hint = Opens as columns straight away in a French Excel or LibreOffice.

## notice
dash-notice-banner = Change notice: { $subject } — takes effect on { $date }.
dash-notice-read = Read the notice

## backup
dash-alert-backup-old = The register's last backup dates from { $at }, more than two days ago: ask { -gateway-operator } to run a backup (emcf-gateway backup) and to check the daily backup.
dash-alert-backup-never = The register has never been backed up: ask { -gateway-operator } to run a backup (emcf-gateway backup) and to check the daily backup.
dash-alert-backup-command = The last backup could not be sent to another machine: ask { -gateway-operator } to fix the command that sends it ([backup] command).

## outage: the register cannot be written (src/dashboard/alerts.rs)
dash-alert-register-unwritable = Since { $since }, the invoice register cannot be written ({ $fault ->
    [no_space] the gateway's disk is full
    [read_only] the gateway's disk is read-only
   *[io] the gateway's disk fails to write
}): no invoice is certified; certification resumes by itself as soon as the register can be written. Tell { -gateway-operator }.

# A register behind its box (issue 27)
dash-anomaly-intro-stopped = The gateway's register lacks invoices the device certified (an older copy restored, a disk that lost its last records). Nothing more is certified on this device until { -gateway-operator } restores a newer copy of the register or acknowledges the missing invoices; tell them.
