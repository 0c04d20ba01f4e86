# Mots partagés par plusieurs parties (API, tableau de bord, CLI).
# Les mêmes ids, avec les mêmes variables, dans locales/fr et locales/en.

yes = oui
no = non
environment-production = production
environment-sandbox = bac à sable

# Utilisés par les tests du catalogue lui-même (src/i18n/catalogue.rs).
test-greeting = Bonjour, { $name }
test-count = { $n ->
    [one] { $n } facture
   *[other] { $n } factures
}

## the QR code of a certification (receipts, dashboard)
qr-not-drawn = Le code QR n'a pas pu être dessiné à partir du texte qrCode ; le texte est donné ci-dessous.

## Who recorded a register entry (its source): the dashboard's invoice page, log show (src/i18n/names.rs)
recorded-by = Enregistrée par
recorded-by-device = l'appareil, en certifiant la facture
recorded-by-reconciled = l'appareil, relu après une interruption (redémarrage ou coupure)
recorded-by-administrator = { $name } (administrateur), d'après le portail de la DGI{ $dashboard ->
    [yes] , depuis le tableau de bord
   *[other] {""}
}
recorded-by-with-note = { $who } : { $note }
recorded-by-other = { $source }

## Les documents, nommés par leur type (la table des types du seed) : reçus, tableau de bord, CLI
invoice-type-fv = Facture de vente
invoice-type-ft = Facture d'acompte
invoice-type-fa = Facture d'avoir
invoice-type-ev = Facture de vente à l'exportation
invoice-type-et = Facture d'acompte à l'exportation
invoice-type-ea = Facture d'avoir à l'exportation
invoice-type-other = Facture { $code }

## La devise d'une facture ou d'un paiement : les montants sont toujours en CDF
invoice-currency-converted = { $currency } (montants en CDF ; { $rate }, cours du { $date })
payment-paid-in-worth = payé en { $currency } : { $worth }
payment-paid-in = payé en { $currency }

## les refus du système (src/i18n/mod.rs) : dits après ce qui a échoué ; son propre texte en détail
io-not-found = fichier ou dossier introuvable (système : { $detail })
io-permission-denied = permission refusée : ce compte n'a pas le droit de le faire (système : { $detail })
io-addr-in-use = l'adresse est déjà utilisée par un autre programme, peut-être une autre passerelle (système : { $detail })
io-addr-not-available = cette machine n'a pas cette adresse (système : { $detail })
io-already-exists = cela existe déjà (système : { $detail })
io-connection-refused = la connexion a été refusée (système : { $detail })
io-timed-out = cela a pris trop de temps (système : { $detail })
io-storage-full = le disque est plein (système : { $detail })
io-read-only = le système de fichiers est en lecture seule (système : { $detail })
io-is-a-directory = c'est un dossier, pas un fichier (système : { $detail })
io-not-a-directory = une partie du chemin n'est pas un dossier (système : { $detail })
io-other = le système a refusé (système : { $detail })

## une anomalie fiscale d'un boîtier (src/model/anomaly.rs)
anomaly-counter-went-back = son compteur de factures a reculé
anomaly-nif-changed = il annonce un autre NIF de contribuable

## les erreurs du registre (src/store/error.rs)
store-io = le registre n'a pas pu être lu ou écrit : { $reason }
store-locked = un autre processus de la passerelle utilise ce répertoire d'état
store-damaged = le registre est endommagé ({ $at }) : il n'est plus modifié tant qu'un opérateur n'a pas restauré journal/journal.log depuis une sauvegarde (ou lancé « emcf-gateway index rebuild » si seul l'index est en désaccord) (détail technique : { $detail })
store-damage-at-seq = enregistrement { $seq } du journal
store-damage-at-offset = octet { $offset } du journal
store-damage-at-file = le fichier du journal
store-damage-at-database = le registre dans PostgreSQL
store-index = l'index du registre a échoué (détail technique : { $detail })
store-conflict = le registre a refusé un changement qui le contredit (détail technique : { $detail })
store-unknown-intent = aucune intention { $id }
store-intent-not-open = l'intention { $id } n'est pas ouverte : elle a déjà été certifiée ou abandonnée
store-unknown-key = aucune clé API « { $id } »
store-unknown-organization = aucune organisation « { $id } »
store-invalid = le registre a refusé l'enregistrement (détail technique : { $detail })
store-json = un enregistrement du registre n'a pas pu être codé ou lu (détail technique : { $detail })
store-halted = le registre n'accepte plus d'écriture après un échec d'écriture : redémarrez la passerelle (détail technique : { $detail })
store-database-unreachable = le serveur PostgreSQL du registre ne répond pas : réessayez dans quelques secondes, la certification reprend d'elle-même quand il répond (détail technique : { $detail })
store-database = le serveur PostgreSQL du registre a refusé une opération (détail technique : { $detail })
store-quota-exhausted = le quota annuel de l'organisation « { $org } » est épuisé
store-fenced = ce processus de la passerelle ne peut plus écrire dans le registre : une autre réplique a repris son travail (détail technique : { $detail }) ; il s'arrête et son service le redémarre
store-devices-in-file = le registre intégré ne garde pas d'appareil : ses appareils sont les blocs [[devices]] du fichier de configuration. Les appareils gardés comme données (emcf-gateway device add) demandent un registre PostgreSQL ([store] url)
store-unknown-device = aucun appareil « { $device } » n'est gardé dans le registre (emcf-gateway device list)
store-device-exists = un appareil « { $device } » est déjà gardé dans le registre : changez-le avec emcf-gateway device update
store-device-in-use = l'appareil « { $device } » sert encore : organisations qui certifient sur lui : { $organizations } ; intentions ouvertes : { $intents }. Rattachez ces organisations à un autre appareil (emcf-gateway org update --device) et réglez ces intentions d'abord
store-device-sealed = le jeton de l'appareil « { $device } » ne peut pas être ouvert ni scellé : { $detail }

## administration (src/admin) : la CLI et le tableau de bord
admin-socket-failed = le socket d'administration du service en marche a échoué (détail technique : { $detail })
admin-socket-denied = ce compte n'a pas le droit d'utiliser le socket d'administration du service en marche { $path } (réservé à son propriétaire) : lancez la commande avec le compte du service, par exemple sudo -u emcf-gateway emcf-gateway ...
admin-service-said = { $text }
admin-internal = erreur interne de la passerelle (détail technique : { $detail })
admin-bad-request = le service en marche n'a pas pu lire la demande (détail technique : { $detail })
admin-no-channel = ce service n'a pas de canal de certification
admin-not-a-service-request = ce n'est pas une demande du service en marche : { $op }
admin-nif-taken = l'organisation « { $other } » certifie déjà le NIF { $nif } sur l'appareil « { $device } » : un NIF, une organisation par appareil
admin-register-in-database = le registre est dans PostgreSQL : il se sauvegarde avec sa base de données (pg_dump, ou une sauvegarde de base avec ses WAL), pas par la passerelle ; voir docs/postgresql.md
admin-no-entry = aucune entrée n° { $sequence } dans le registre { $environment ->
    [sandbox] du bac à sable
   *[production] de production
}
admin-no-entry-here = aucune entrée n° { $sequence } de cette organisation dans le registre { $environment ->
    [sandbox] du bac à sable
   *[production] de production
}
admin-no-entry-rn = aucune facture « { $rn } » de l'organisation « { $org } » dans le registre { $environment ->
    [sandbox] du bac à sable
   *[production] de production
}
admin-no-organization = aucune organisation « { $id } »
admin-no-token = aucun jeton du tableau de bord « { $id } »
admin-no-key-here = aucune clé API « { $id } » dans cette organisation
admin-ack-needs-who-and-why = dites qui prend en compte l'anomalie (--by) et pourquoi (--note)
admin-bad-org-id = l'identifiant d'organisation « { $id } » n'est pas valable : 1 à 32 caractères parmi a-z, 0-9 et -
admin-bad-identity-field = le { $name } « { $value } » n'est pas valable : 1 à 20 caractères ASCII imprimables, sans , ; : & < > ^
admin-bad-emails = adresses e-mail des administrateurs : { $max } au plus, chacune comme nom@exemple.cd
admin-empty-name-or-device = le nom et l'appareil de l'organisation ne peuvent pas être vides
admin-device-token-empty = le fichier du jeton est vide : collez-y le jeton de l'e-MCF pris sur le portail de la DGI
admin-device-token-malformed = le fichier du jeton contient des caractères qu'un en-tête HTTP ne peut pas porter (un saut de ligne au milieu ?)
admin-device-bad-name = « { $device } » ne peut pas nommer un appareil : de 1 à 64 caractères parmi a-z, 0-9, « - » et « _ », sans « - » ni « _ » au début
admin-device-reserved-name = le nom d'appareil « { $device } » est réservé : « embedded » et les noms qui commencent par « sandbox- » sont ceux des simulateurs intégrés
admin-device-in-file = un bloc [[devices]] du fichier de configuration s'appelle déjà « { $device } » : choisissez un autre nom
admin-device-bad-url = « { $url } » n'est pas l'adresse d'une API : http://… ou https://… est attendu
admin-bad-max-invoice-total = le plafond par facture { $value } n'est pas valable : un montant en CDF supérieur à 0, avec 2 décimales au plus, d'au plus { $max }
admin-entry-by-sequence-or-rn = désignez une entrée par son numéro, ou par --org et --rn
admin-probe-needs-service = un appareil se sonde par le service en marche (ou par la CLI sur son port quand le service est arrêté), pas sur le registre
admin-nif-needs-service = ce qu'un appareil a dit de son NIF n'est connu que du service en marche, pas du registre
admin-intents-need-service = les factures en doute sont listées et réglées par le service en marche (il interroge les canaux) : démarrez-le, puis relancez la commande

## la liaison d'un boîtier (src/device) : ce qu'une personne lit ; le texte de la liaison en détail
device-unavailable = l'appareil n'est pas disponible (détail technique : { $detail })
device-queue-full = la file d'attente de l'appareil est pleine : réessayez dans un instant
device-no-answer = l'appareil n'a pas répondu à la commande { $command }
device-disconnected = la liaison avec l'appareil a été perdue
device-outcome-unknown = l'issue de la finalisation (38h) est inconnue : la passerelle la règle avec l'appareil
device-unreadable-state = l'état du boîtier (C1h) ne peut pas être lu (détail technique : { $detail })
device-bad-reply = la réponse à la commande { $command } ne peut pas être lue (détail technique : { $detail })
device-not-sent = la commande n'a pas été envoyée : elle ne tient pas dans une trame (détail technique : { $detail })
device-shutting-down = la liaison avec l'appareil s'arrête
device-blocked-state = son état (C1h) ne peut pas être lu : { $detail }
device-blocked-memory-full = sa mémoire fiscale est pleine (bit d'état S2.1)
device-blocked-dgi-overdue = il n'a pas joint le serveur de la DGI depuis trop longtemps (bit d'état S3.0)

## Whom an organization's administrator asks for a plan, a quota, a dashboard token or help:
## the one who runs the gateway (e-mails, dashboard, API texts say it with this term).
-gateway-operator = l'opérateur de la passerelle

## Why a configured device cannot certify now (src/certify/mcf/readiness.rs, src/certify/edef/health.rs):
## the dashboard's technical details; the log says them in English
problem-box-down = le boîtier ne répond pas (détail technique : { $detail })
problem-box-not-connected-yet = le boîtier n'est pas encore relié
problem-box-blocked = le boîtier répond, mais { $why }
problem-box-nif-mismatch = le boîtier est personnalisé pour le NIF { $nif }, pas pour celui de l'organisation { $organizations } : corrigez le NIF de l'organisation ou son appareil
problem-box-settling = une facture précédente est en cours de règlement avec le boîtier
problem-dgi-token-rejected = le service en ligne de la DGI refuse le jeton : { $why }
problem-dgi-down = le service en ligne de la DGI ne répond pas (détail technique : { $detail })
problem-dgi-not-reached-yet = le service en ligne de la DGI n'a pas encore été joint
problem-dgi-blocked = la DGI indique que cet e-MCF ne peut pas certifier pour l'instant (statut false)
problem-dgi-nif-mismatch = le jeton est celui de l'e-MCF du NIF { $nif }, pas de celui de l'organisation { $organizations } : corrigez le NIF de l'organisation ou installez le jeton de cet e-MCF
problem-dgi-settling = une facture précédente est en cours de règlement avec la DGI

## Issue 24 (safety): a name or label an administrator types is one plain line people read as
## it is written, in tables, pages and e-mail subjects (src/admin/mod.rs `check_name`)
admin-bad-name = { $field ->
        [key-label] le libellé de la clé
        [token-label] le libellé du jeton
       *[org-name] le nom de l'organisation
    } { $fault ->
        [too-long] fait { $length } caractères, { $max } au plus
        [hidden] contient { $kind ->
            [lf] un saut de ligne
            [cr] un retour chariot
            [tab] une tabulation
            [layout] une marque invisible qui change le sens d'écriture ou coupe la ligne
           *[other] un caractère de contrôle
        } (U+{ $char }) au caractère { $position } : il doit tenir sur une ligne et se lire tel qu'il est écrit
       *[encoded-word] contient « =? », le début d'un mot encodé d'e-mail (RFC 2047) : une messagerie afficherait autre chose que ce qui est écrit
    }

## backup (a restore that did not finish, src/store/embedded/open.rs)
store-restore-unfinished = une restauration dans { $dir } n'est pas allée au bout : ce répertoire d'état n'est pas ouvert tant qu'elle n'est pas terminée. Relancez la même commande « emcf-gateway restore » (avec la même copie) : elle reprend sans rien perdre ; ce qui était là avant est gardé dans { $dir }/before-restore-*

# A register behind its box (issue 27)
anomaly-register-behind = il a certifié des factures que le registre n'a pas : le registre est en retard sur lui
problem-register-behind = { $channel ->
    [web_api] l'e-MCF du service en ligne de la DGI
   *[other] le boîtier
} a certifié des factures que le registre de la passerelle n'a pas (compteurs n° { $missing }) : le registre a été restauré d'une copie plus ancienne ou a perdu ses derniers enregistrements. Plus rien n'est certifié sur cet appareil tant qu'un administrateur n'a pas restauré une copie plus récente du registre ou pris acte des certifications manquantes avec : emcf-gateway device anomalies ack { $anomaly } --numbers "{ $missing }" --by "VOTRE NOM" --note "POURQUOI"
admin-ack-no-numbers-here = --numbers ne vaut que pour un registre en retard sur son boîtier ; cette anomalie n'en a pas
admin-ack-numbers-differ = les certifications manquantes de cette anomalie sont les n° { $missing } ; vous avez donné { $given }. Donnez exactement ces numéros, après avoir vérifié chacun sur le portail de la DGI : emcf-gateway device anomalies ack { $anomaly } --numbers "{ $missing }" --by "VOTRE NOM" --note "POURQUOI"
admin-ack-rn-not-missing = --rn { $number }={ $rn } : donnez un rn non vide pour l'un des numéros manquants de cette anomalie (n° { $missing })
admin-ack-rn-differs = --rn { $number }={ $rn } : l'état du boîtier lui-même nomme { $known } comme sa certification n° { $number } ; vérifiez sur le portail de la DGI
