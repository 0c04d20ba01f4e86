## Alerts e-mailed to an organization's administrators (src/alerts/text.rs)

alert-quota-subject = [e-MCF] { $org } : { $percent } % du quota annuel de factures atteint
alert-quota-body = L'organisation { $org } a certifié { $used } factures sur son quota annuel de { $quota } pour { $year } ({ $percent } %). { $n ->
    [0] Il n'en reste aucune.
    [one] Il en reste { $left }.
   *[other] Il en reste { $left }.
} Quand le quota est atteint, la passerelle refuse les factures (HTTP 429) : { $plan ->
    [start] pensez à passer à la formule supérieure (Grow).
   *[other] demandez à votre fournisseur d'augmenter le quota.
}
alert-quota-full-body = L'organisation { $org } a utilisé tout son quota annuel de factures pour { $year } ({ $used } sur { $quota }). Les nouvelles factures sont refusées (HTTP 429) { $plan ->
    [start] jusqu'au changement de formule : l'administrateur est invité à passer à la formule supérieure (Grow) pour continuer à certifier.
   *[other] jusqu'à l'augmentation du quota : l'administrateur est invité à la demander à son fournisseur pour continuer à certifier.
}
alert-channel-down-subject = [e-MCF] l'appareil { $device } ne répond plus
alert-channel-down-body = L'appareil fiscal { $device }, sur lequel l'organisation { $org } certifie ses factures, ne répond plus depuis le { $since }. Aucune facture ne peut être certifiée tant qu'il ne répond pas : vérifiez son alimentation et son câble, ou l'accès à l'API de la DGI.
alert-dgi-contact-subject = [e-MCF] l'appareil { $device } n'a pas contacté la DGI depuis longtemps
alert-dgi-contact-body = Le dernier contact de l'appareil fiscal { $device } (organisation { $org }) avec les serveurs de la DGI date du { $at }. Vérifiez sa connexion au réseau : un appareil qui ne transmet pas ses factures finit par se bloquer.
alert-in-doubt-subject = [e-MCF] { $org } : { $count ->
    [one] une facture en doute
   *[other] { $count } factures en doute
}
alert-in-doubt-body = L'organisation { $org } a { $count ->
    [one] une facture dont l'issue n'est pas connue
   *[other] { $count } factures dont l'issue n'est pas connue
} (certifiée ou non). Consultez le tableau de bord (Vue d'ensemble) ou « emcf-gateway intent list » pour la régler.
alert-never = jamais
alert-mail-footer = — message automatique de la passerelle emcf-gateway ; il n'est envoyé qu'une fois par alerte.

## The CLI's check of --admin-email (src/cli/org_commands.rs)

cli-org-too-many-emails = --admin-email : { $max } adresses au plus (il y en a { $count })
