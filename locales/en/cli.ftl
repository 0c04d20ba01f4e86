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
cli-org-unknown-device = no device "{ $device }" in the configuration (devices: { $known }); an organization can only certify on a configured device
cli-org-nif-differs = device "{ $device }" is personalized for NIF { $device_nif }, not { $nif }: every invoice would be refused (code 153). Fix the NIF, or the organization's device.
cli-org-nif-unchecked = warning: the NIF could not be checked with device "{ $device }" ({ $reason }); it will be at the first invoice (code 153 if it differs).
cli-org-service-stopped = the service is not running
cli-org-saved = organization "{ $id }" saved
cli-org-list-header = ID | NIF | ISF | PLAN | DEVICE | NAME
cli-org-quota-override = the organization's own quota
cli-org-quota-plan = the { $plan } plan's quota
cli-org-quota-use = { $used } used of { $quota }, { $remaining } left ({ $source })
cli-field-id = Id
cli-field-name = Name
cli-field-plan = Plan
cli-field-device = Device
cli-field-quota = Quota { $year }

## key, dashboard-token (src/cli/key_commands.rs)
cli-key-issued = key { $id }: store this key now, it is not shown again
cli-key-list-header = ID | ENVIRONMENT | ENABLED | CREATED | LABEL
cli-key-enabled = key { $id } enabled
cli-key-disabled = key { $id } disabled: the next request with it gets 401
cli-token-issued = dashboard token { $id }: give it to the organization's admin now, it is not shown again
cli-token-list-header = ID | REVOKED | CREATED | LABEL
cli-token-revoked = dashboard token { $id } revoked; its sessions have ended

## log (src/cli/admin_commands.rs)
cli-log-list-header = SEQ | ORG | RN | TYPE | TOTAL | CODEDEFDGI | CERTIFIED

## main.rs
cli-error = error: { $text }
cli-org-nif-not-said = the device has not said yet which NIF it is personalized for
