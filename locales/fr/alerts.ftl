## Alerts e-mailed to an organization's administrators (src/alerts/text.rs). They speak to a
## shop's administrator: what happened, what to do now, where to look; never a status code,
## an error code or a protocol's name.

alert-mail-greeting = Bonjour,
alert-mail-next-step = Ce qu'il faut faire : { $step }
alert-mail-dashboard-link =
    Tableau de bord de l'organisation { $org } (connexion avec votre jeton de tableau de bord) :
    { $url }
alert-mail-dashboard-how = Tableau de bord de l'organisation { $org } : ouvrez l'adresse de la passerelle suivie de /dashboard (demandez-la à { -gateway-operator } si vous ne l'avez pas) et connectez-vous avec votre jeton de tableau de bord.
alert-mail-footer = — Message automatique de la passerelle de facturation (emcf-gateway), envoyé une seule fois par alerte. Pour ne plus recevoir ces messages, demandez à { -gateway-operator } de retirer votre adresse.

alert-quota-subject = [e-MCF] { $org } : { $percent } % du quota annuel de factures utilisé
alert-quota-body = L'organisation { $org } a certifié { $n_used ->
    [one] { $used } facture
   *[other] { $used } factures
} sur les { $quota } de son quota annuel { $year } ({ $percent } %). { $n ->
    [0] Il n'en reste aucune.
    [one] Il n'en reste plus qu'une.
   *[other] Il en reste { $left }.
} Une fois le quota atteint, la passerelle refuse toute nouvelle facture jusqu'à la fin de l'année, sauf si le quota est augmenté.
alert-quota-next = { $plan ->
    [start] pour ne pas être bloqué, demandez dès maintenant la formule Grow à { -gateway-operator }.
   *[other] pour ne pas être bloqué, demandez dès maintenant à { -gateway-operator } d'augmenter votre quota annuel.
}
alert-quota-full-subject = [e-MCF] { $org } : quota annuel de factures atteint, les nouvelles factures sont refusées
alert-quota-full-body = L'organisation { $org } a utilisé tout son quota annuel { $year } : { $n_used ->
    [one] { $used } facture certifiée
   *[other] { $used } factures certifiées
} sur { $quota }. La passerelle refuse désormais toute nouvelle facture : vos caisses et votre logiciel de gestion ne peuvent plus obtenir de facture certifiée tant que le quota n'est pas augmenté.
alert-quota-full-next = { $plan ->
    [start] demandez la formule Grow à { -gateway-operator }. Dès le changement de formule, renvoyez depuis votre logiciel de gestion les factures refusées.
   *[other] demandez à { -gateway-operator } d'augmenter votre quota annuel. Dès que c'est fait, renvoyez depuis votre logiciel de gestion les factures refusées.
}

alert-channel-down-subject = { $channel ->
    [web_api] [e-MCF] { $org } : le service en ligne de la DGI ne répond plus
   *[box] [e-MCF] { $org } : l'appareil fiscal { $device } ne répond plus
}
alert-channel-down-body = { $channel ->
    [web_api] Le service en ligne de la DGI par lequel l'organisation { $org } certifie ses factures (« { $device } » dans la passerelle) ne répond plus depuis le { $since }.
   *[box] L'appareil fiscal « { $device } », par lequel l'organisation { $org } certifie ses factures, ne répond plus depuis le { $since }.
} Tant qu'il ne répond pas, aucune facture ne peut être certifiée.
alert-channel-down-next = { $channel ->
    [web_api] prévenez { -gateway-operator }, qui vérifie la connexion de la passerelle à internet et l'accès au service de la DGI. Une fois la liaison rétablie, renvoyez depuis votre logiciel de gestion les factures refusées.
   *[box] vérifiez que l'appareil fiscal est allumé et que son câble est bien branché ; si c'est le cas, prévenez { -gateway-operator }. Une fois l'appareil de nouveau en service, renvoyez depuis votre logiciel de gestion les factures refusées.
}

alert-dgi-contact-subject = [e-MCF] { $org } : l'appareil fiscal { $device } ne communique plus avec la DGI
alert-dgi-contact-body = Le dernier échange de l'appareil fiscal « { $device } » (organisation { $org }) avec la DGI date du { $at }. Un appareil qui ne transmet pas ses factures à la DGI finit par se bloquer, et plus aucune facture ne peut alors être certifiée.
alert-dgi-contact-never-body = L'appareil fiscal « { $device } » (organisation { $org }) n'a encore jamais échangé avec la DGI. Un appareil qui ne transmet pas ses factures à la DGI finit par se bloquer, et plus aucune facture ne peut alors être certifiée.
alert-dgi-contact-next = vérifiez que l'appareil fiscal est allumé et relié à internet (câble réseau, Wi-Fi ou carte SIM selon le modèle) ; si c'est le cas, prévenez { -gateway-operator }.

alert-in-doubt-subject = [e-MCF] { $org } : { $count ->
    [one] une facture en doute
   *[other] { $count } factures en doute
}
alert-in-doubt-body = { $count ->
    [one] L'organisation { $org } a une facture en doute : on ne sait pas si elle a été certifiée, car la réponse de l'appareil fiscal ou de la DGI s'est perdue pendant sa certification.
   *[other] L'organisation { $org } a { $count } factures en doute : on ne sait pas si elles ont été certifiées, car la réponse de l'appareil fiscal ou de la DGI s'est perdue pendant leur certification.
}
alert-in-doubt-next = { $waiting ->
    [0] rien pour l'instant : la passerelle règle la question d'elle-même dès que l'appareil fiscal répond. Ne renvoyez pas { $count ->
        [one] cette facture
       *[other] ces factures
    } sous un autre numéro ; si cela dure, prévenez { -gateway-operator }.
   *[other] ouvrez le tableau de bord et, dans la partie des factures en doute, cherchez chacune sur le portail de la DGI, puis indiquez ce qu'il montre. Ne renvoyez pas { $count ->
        [one] cette facture
       *[other] ces factures
    } sous un autre numéro.
}

## The CLI's check of --admin-email (src/cli/org_commands.rs)

cli-org-too-many-emails = --admin-email : { $max } adresses au plus (il y en a { $count })

## notice
notice-mail-subject = [e-MCF] Avis de changement : { $subject }
notice-mail-intro = L'opérateur de la passerelle de facturation annonce aux administrateurs de { $org } un changement qui prend effet le { $date } :
notice-mail-retires = À cette date, la version { $version } de l'API de la passerelle sera retirée : les logiciels qui l'utilisent (ERP, caisse) doivent être passés à la version suivante avant. Transmettez ce message à la personne qui les entretient.
notice-mail-link = L'avis complet, à jour : { $url }
notice-mail-dashboard = Cet avis est aussi affiché sur le tableau de bord de { $org } jusqu'à cette date.
notice-mail-footer = — Message de la passerelle de facturation (emcf-gateway), envoyé une seule fois par avis à chaque organisation. Pour toute question, répondez à l'opérateur de la passerelle.

## backup
alert-backup-old-subject = [e-MCF] { $org } : pas de sauvegarde récente du registre des factures
alert-backup-old-body = La dernière sauvegarde réussie du registre des factures (organisation { $org }) date du { $at }, il y a plus de deux jours. Si le disque de la passerelle tombait en panne, les factures certifiées depuis seraient perdues pour la passerelle.
alert-backup-never-body = Le registre des factures (organisation { $org }) n'a encore jamais été sauvegardé, alors qu'il contient des factures depuis plus de deux jours. Si le disque de la passerelle tombait en panne, elles seraient perdues pour la passerelle.
alert-backup-old-next = demandez à { -gateway-operator } de lancer une sauvegarde (« emcf-gateway backup ») et de vérifier la sauvegarde quotidienne.
alert-backup-command-subject = [e-MCF] { $org } : la sauvegarde n'a pas été envoyée vers l'autre machine
alert-backup-command-body = La sauvegarde du registre des factures (organisation { $org }) est faite sur la passerelle, mais son envoi vers une autre machine a échoué le { $at }. Si la machine de la passerelle était perdue, la sauvegarde le serait avec elle.
alert-backup-command-next = demandez à { -gateway-operator } de corriger la commande d'envoi des sauvegardes, puis de relancer une sauvegarde (« emcf-gateway backup »).

## outage: the register cannot be written (src/certify/storage_fault.rs)
alert-register-unwritable-subject = [e-MCF] { $org } : la passerelle ne peut plus enregistrer de factures
alert-register-unwritable-body = Depuis le { $since }, le registre des factures de la passerelle ne peut pas être écrit ({ $fault ->
    [no_space] son disque est plein
    [read_only] son disque est en lecture seule
    [database] sa base de données PostgreSQL ne répond pas
   *[io] son disque renvoie des erreurs d'écriture
}) : aucune facture de l'organisation { $org } n'est certifiée tant qu'il ne peut pas l'être. Votre logiciel de gestion reçoit un refus et peut renvoyer les factures plus tard ; la certification reprend d'elle-même, sans redémarrage, dès que le registre peut être écrit.
alert-register-unwritable-next = { $fault ->
    [no_space] demandez à { -gateway-operator } de libérer de la place sur le disque de la passerelle.
    [read_only] demandez à { -gateway-operator } de vérifier le disque de la passerelle et de le remettre en écriture.
    [database] demandez à { -gateway-operator } de vérifier le serveur PostgreSQL du registre (en marche, joignable, disque non plein).
   *[io] demandez à { -gateway-operator } de vérifier le disque de la passerelle, qui est peut-être en train de lâcher.
}

# A register behind its box (issue 27)
alert-register-behind-subject = [e-MCF] { $org } : plus aucune facture certifiée, le registre est en retard sur l'appareil « { $device } »
alert-register-behind-body = L'appareil fiscal « { $device } » (organisation { $org }) a certifié des factures que le registre de la passerelle n'a pas (compteurs n° { $missing }) : le registre a sans doute été restauré d'une copie plus ancienne, ou le disque a perdu ses derniers enregistrements. Pour ne jamais certifier deux fois la même facture, plus rien n'est certifié sur cet appareil.
alert-register-behind-next = prévenez { -gateway-operator } : il restaure une copie plus récente du registre, ou vérifie ces factures sur le portail de la DGI et en prend acte (emcf-gateway device anomalies ack). Ne renvoyez pas de facture sous un autre numéro.
