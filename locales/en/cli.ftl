# cli
# The same ids, with the same variables, in locales/fr and locales/en (src/i18n/catalogue.rs tests).

## Demo start (src/cli/demo.rs)
cli-demo-created = Demo organization created on the bundled simulator (nothing is fiscal). Its keys are shown this once: store them now.
cli-demo-try = Try:
cli-demo-lost = Lost a key? A new one: emcf-gateway key issue --org { $org }
cli-demo-existing = The demo organization "{ $org }" exists: its keys were shown at its first start. For a new API key:
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
cli-log-list-header = SEQ | ORG | RN | TYPE | TOTAL (CDF) | CODEDEFDGI | CERTIFIED

## main.rs
cli-error = error: { $text }
cli-org-nif-not-said = the device has not said yet which NIF it is personalized for

## log show (src/cli/invoice_view.rs)
cli-show-title = { $document } { $rn } — { $environment } register, entry { $sequence }
cli-show-seller = Seller
cli-show-type = Type
cli-show-certified = Certified at
cli-show-received = Received at
cli-show-channel = Device · key · source
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
cli-show-counters = Counters
cli-show-device-time = Device date
cli-show-original = This credit note reduces the invoice:
cli-show-original-unknown = { $code } (not in this register: certified elsewhere or before the gateway)
cli-show-credit-notes = Credit notes that reduce this invoice:
cli-show-links-header = # | RN | TYPE | TOTAL (CDF) | CODEDEFDGI | CERTIFIED AT
cli-show-kept = Content kept as certified: its SHA-256 is the entry's digest ({ $digest }).
cli-show-not-kept = Content not kept: invoice certified by 1.4.0 or before, which kept only the digest { $digest }.
cli-show-unreadable = The kept content cannot be shown as the certified one: { $reason } (run "log verify").

## log export (src/cli/export.rs)
cli-export-dates-reversed = --from is after --to
cli-export-done = { $count ->
    [one] { $count } entry exported
   *[other] { $count } entries exported
}
cli-progress-entries = entries read
cli-progress-rebuild = of the journal read again (index rebuild)
