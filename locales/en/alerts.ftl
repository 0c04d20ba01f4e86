## Alerts e-mailed to an organization's administrators (src/alerts/text.rs). They speak to a
## shop's administrator: what happened, what to do now, where to look; never a status code,
## an error code or a protocol's name.

alert-mail-greeting = Hello,
alert-mail-next-step = What to do: { $step }
alert-mail-dashboard-link =
    Dashboard of { $org } (sign in with your dashboard token):
    { $url }
alert-mail-dashboard-how = Dashboard of { $org }: open the gateway's address followed by /dashboard (ask { -gateway-operator } for it if you do not have it) and sign in with your dashboard token.
alert-mail-footer = — An automatic message of the invoicing gateway (emcf-gateway), sent once per alert. To stop receiving these messages, ask { -gateway-operator } to remove your address.

alert-quota-subject = [e-MCF] { $org }: { $percent }% of the annual invoice quota used
alert-quota-body = { $org } has certified { $used } of the { $quota } { $n_used ->
    [one] invoice
   *[other] invoices
} of its annual quota for { $year } ({ $percent }%). { $n ->
    [0] None is left.
    [one] Only one is left.
   *[other] { $left } are left.
} Once the quota is reached, the gateway refuses every new invoice until the end of the year, unless the quota is raised.
alert-quota-next = { $plan ->
    [start] so as not to be blocked, ask { -gateway-operator } for the Grow plan now.
   *[other] so as not to be blocked, ask { -gateway-operator } now to raise your annual quota.
}
alert-quota-full-subject = [e-MCF] { $org }: annual invoice quota reached, new invoices are refused
alert-quota-full-body = { $org } has used its whole annual quota for { $year }: { $used } of { $quota } { $n_used ->
    [one] invoice
   *[other] invoices
} certified. The gateway now refuses every new invoice: your tills and your accounting software cannot get a certified invoice until the quota is raised.
alert-quota-full-next = { $plan ->
    [start] ask { -gateway-operator } for the Grow plan. As soon as the plan has changed, send the refused invoices again from your accounting software.
   *[other] ask { -gateway-operator } to raise your annual quota. As soon as it is done, send the refused invoices again from your accounting software.
}

alert-channel-down-subject = { $channel ->
    [web_api] [e-MCF] { $org }: the DGI's online service does not answer
   *[box] [e-MCF] { $org }: fiscal device { $device } does not answer
}
alert-channel-down-body = { $channel ->
    [web_api] The DGI's online service through which { $org } certifies its invoices ("{ $device }" in the gateway) has not answered since { $since }.
   *[box] The fiscal device "{ $device }", through which { $org } certifies its invoices, has not answered since { $since }.
} As long as it does not answer, no invoice can be certified.
alert-channel-down-next = { $channel ->
    [web_api] tell { -gateway-operator }, who checks the gateway's internet connection and its access to the DGI's service. Once the link is back, send the refused invoices again from your accounting software.
   *[box] check that the fiscal device is switched on and that its cable is plugged in; if it is, tell { -gateway-operator }. Once the device works again, send the refused invoices again from your accounting software.
}

alert-dgi-contact-subject = [e-MCF] { $org }: fiscal device { $device } no longer talks to the DGI
alert-dgi-contact-body = The last exchange of fiscal device "{ $device }" of { $org } with the DGI was on { $at }. A device that does not send its invoices to the DGI ends up blocked, and then no invoice can be certified.
alert-dgi-contact-never-body = Fiscal device "{ $device }" of { $org } has never exchanged with the DGI yet. A device that does not send its invoices to the DGI ends up blocked, and then no invoice can be certified.
alert-dgi-contact-next = check that the fiscal device is switched on and connected to the internet (network cable, Wi-Fi or SIM card, depending on the model); if it is, tell { -gateway-operator }.

alert-in-doubt-subject = [e-MCF] { $org }: { $count ->
    [one] one invoice in doubt
   *[other] { $count } invoices in doubt
}
alert-in-doubt-body = { $count ->
    [one] { $org } has an invoice in doubt: nobody knows whether it was certified, because the answer of the fiscal device or of the DGI was lost while it was being certified.
   *[other] { $org } has { $count } invoices in doubt: nobody knows whether they were certified, because the answer of the fiscal device or of the DGI was lost while they were being certified.
}
alert-in-doubt-next = { $waiting ->
    [0] nothing for now: the gateway settles it by itself as soon as the fiscal device answers. Do not send { $count ->
        [one] this invoice
       *[other] these invoices
    } again under another number; if it lasts, tell { -gateway-operator }.
   *[other] open the dashboard and, in the part on invoices in doubt, look each one up on the DGI's portal, then say what it shows. Do not send { $count ->
        [one] this invoice
       *[other] these invoices
    } again under another number.
}

## The CLI's check of --admin-email (src/cli/org_commands.rs)

cli-org-too-many-emails = --admin-email: { $max } addresses at most ({ $count } given)

## notice
notice-mail-subject = [e-MCF] Change notice: { $subject }
notice-mail-intro = The operator of the invoicing gateway announces to the administrators of { $org } a change that takes effect on { $date }:
notice-mail-retires = On that date, version { $version } of the gateway's API will be retired: the software that uses it (ERP, till) must be moved to the next version before. Forward this message to whoever maintains it.
notice-mail-link = The full notice, kept up to date: { $url }
notice-mail-dashboard = This notice is also shown on the dashboard of { $org } until that date.
notice-mail-footer = — A message of the invoicing gateway (emcf-gateway), sent once per notice to each organization. For any question, answer the gateway's operator.

## backup
alert-backup-old-subject = [e-MCF] { $org }: no recent backup of the invoice register
alert-backup-old-body = The last good backup of the invoice register (organization { $org }) dates from { $at }, more than two days ago. If the gateway's disk failed, the invoices certified since would be lost to the gateway.
alert-backup-never-body = The invoice register (organization { $org }) has never been backed up, and it has held invoices for more than two days. If the gateway's disk failed, they would be lost to the gateway.
alert-backup-old-next = ask { -gateway-operator } to run a backup ("emcf-gateway backup") and to check the daily backup.
alert-backup-command-subject = [e-MCF] { $org }: the backup was not sent to the other machine
alert-backup-command-body = The backup of the invoice register (organization { $org }) is made on the gateway, but sending it to another machine failed on { $at }. If the gateway's machine were lost, the backup would be lost with it.
alert-backup-command-next = ask { -gateway-operator } to fix the command that sends the backups, then to run a backup again ("emcf-gateway backup").

## outage: the register cannot be written (src/certify/storage_fault.rs)
alert-register-unwritable-subject = [e-MCF] { $org }: the gateway can no longer record invoices
alert-register-unwritable-body = Since { $since }, the gateway's invoice register cannot be written ({ $fault ->
    [no_space] its disk is full
    [read_only] its disk is read-only
    [database] its PostgreSQL database does not answer
   *[io] its disk fails to write
}): no invoice of the organization { $org } is certified until it can be. Your management software is refused and can send the invoices again later; certification resumes by itself, without a restart, as soon as the register can be written.
alert-register-unwritable-next = { $fault ->
    [no_space] ask { -gateway-operator } to free space on the gateway's disk.
    [read_only] ask { -gateway-operator } to check the gateway's disk and make it writable again.
    [database] ask { -gateway-operator } to check the register's PostgreSQL server (running, reachable, its disk not full).
   *[io] ask { -gateway-operator } to check the gateway's disk, which may be failing.
}

# A register behind its box (issue 27)
alert-register-behind-subject = [e-MCF] { $org }: nothing certified any more, the register is behind device "{ $device }"
alert-register-behind-body = Fiscal device "{ $device }" (organization { $org }) certified invoices the gateway's register does not hold (counters no. { $missing }): the register was probably restored from an older copy, or the disk lost its last records. So that no invoice is ever certified twice, nothing more is certified on this device.
alert-register-behind-next = tell { -gateway-operator }: they restore a newer copy of the register, or check these invoices on the DGI's portal and acknowledge them (emcf-gateway device anomalies ack). Do not send an invoice again under another number.
