## Alerts e-mailed to an organization's administrators (src/alerts/text.rs)

alert-quota-subject = [e-MCF] { $org }: { $percent }% of the annual invoice quota reached
alert-quota-body = Organization { $org } has certified { $used } invoices of its annual quota of { $quota } for { $year } ({ $percent }%). { $n ->
    [0] None is left.
    [one] { $left } is left.
   *[other] { $left } are left.
} Once the quota is reached the gateway refuses invoices (HTTP 429): { $plan ->
    [start] consider upgrading to the larger plan (Grow).
   *[other] ask your provider to raise the quota.
}
alert-quota-full-body = Organization { $org } has used its whole annual invoice quota for { $year } ({ $used } of { $quota }). { $plan ->
    [start] New invoices are refused (HTTP 429) until the plan changes: the administrator is invited to upgrade to the larger plan (Grow) to go on certifying.
   *[other] New invoices are refused (HTTP 429) until the quota is raised: the administrator is invited to ask the provider for it to go on certifying.
}
alert-channel-down-subject = [e-MCF] device { $device } does not answer
alert-channel-down-body = The fiscal device { $device }, on which organization { $org } certifies its invoices, has not answered since { $since }. No invoice can be certified until it answers: check its power and cable, or the access to the DGI's API.
alert-dgi-contact-subject = [e-MCF] device { $device } has not contacted the DGI for a long time
alert-dgi-contact-body = The last contact of fiscal device { $device } (organization { $org }) with the DGI's servers was on { $at }. Check its network connection: a device that does not send its invoices ends up blocked.
alert-in-doubt-subject = [e-MCF] { $org }: { $count ->
    [one] one invoice in doubt
   *[other] { $count } invoices in doubt
}
alert-in-doubt-body = Organization { $org } has { $count ->
    [one] one invoice whose outcome is unknown
   *[other] { $count } invoices whose outcome is unknown
} (certified or not). See the dashboard (Overview) or "emcf-gateway intent list" to settle it.
alert-never = never
alert-mail-footer = — an automatic message of emcf-gateway; it is sent once per alert.

## The CLI's check of --admin-email (src/cli/org_commands.rs)

cli-org-too-many-emails = --admin-email: { $max } addresses at most ({ $count } given)
