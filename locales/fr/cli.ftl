# cli
# The same ids, with the same variables, in locales/fr and locales/en (src/i18n/catalogue.rs tests).

## Démarrage de démonstration (src/cli/demo.rs)
cli-demo-created = Organisation de démonstration créée sur le simulateur intégré (rien n'est fiscal). Ses clés ne sont affichées qu'une fois : notez-les maintenant.
cli-demo-try = Essayez :
cli-demo-lost = Clé perdue ? Une nouvelle : emcf-gateway key issue --org { $org }
cli-demo-existing = L'organisation de démonstration « { $org } » existe déjà : ses clés ont été données à son premier démarrage (à l'écran, ou dans { $file } si la sortie n'était pas un terminal). Pour une nouvelle clé API :
cli-demo-dashboard = Pour le tableau de bord ({ $url }), un jeton de connexion :

## Répertoire d'état (src/cli/state_dir.rs)
cli-no-state-dir = aucun registre dans { $dir } : cette commande ne crée rien. Lancez-la depuis le dossier du service, ou indiquez le répertoire d'état (--state-dir, EMCF_STATE_DIR, ou state_dir dans le fichier de configuration). Seuls « serve » et « org add » créent un registre.

## index rebuild
cli-index-service-running = arrêtez d'abord le service : il tient { $dir }
cli-index-agrees = l'index concorde avec le journal : rien à reconstruire, rien n'a été changé (--force le reconstruit quand même)
cli-index-rebuilt = index reconstruit à partir du journal (l'ancien est gardé à part : { $aside }) ; le journal est vérifié

## org (src/cli/org_commands.rs)
cli-org-exists = l'organisation « { $id } » existe déjà : pour la modifier, emcf-gateway org update { $id } ...
cli-org-not-found = aucune organisation « { $id } »
cli-org-bad-plan = --plan doit valoir start ou grow
cli-org-bad-email = --admin-email { $address } : ce n'est pas une adresse e-mail (nom@exemple.cd)
cli-org-bad-max-total = --max-invoice-total { $value } : écrivez un montant en CDF supérieur à 0, avec 2 décimales au plus et un point comme séparateur (par exemple 1500000 ou 1500000.50)
cli-org-no-max-total = aucun
cli-org-unknown-device = aucun appareil « { $device } » dans la configuration (appareils : { $known }) ; une organisation ne peut certifier que sur un appareil configuré
cli-org-nif-differs = l'appareil « { $device } » est personnalisé pour le NIF { $device_nif }, pas pour { $nif } : chaque facture serait refusée (code 153). Corrigez le NIF, ou l'appareil de l'organisation.
cli-org-nif-unchecked = attention : le NIF n'a pas pu être vérifié auprès de l'appareil « { $device } » ({ $reason }) ; il le sera à la première facture (code 153 s'il diffère).
cli-org-service-stopped = le service n'est pas démarré
cli-org-saved = organisation « { $id } » enregistrée
cli-org-list-header = ID | NIF | ISF | FORMULE | APPAREIL | PLAFOND/FACTURE | NOM
cli-org-quota-override = quota propre à l'organisation
cli-org-quota-plan = quota de la formule { $plan }
cli-org-quota-use = { $used } utilisées sur { $quota }, reste { $remaining } ({ $source })
cli-field-id = Id
cli-field-name = Nom
cli-field-plan = Formule
cli-field-device = Appareil
cli-field-admin-emails = Alertes à
cli-field-quota = Quota { $year }
cli-field-max-total = Plafond

## key, dashboard-token (src/cli/key_commands.rs)
cli-key-issued = clé { $id } : notez-la maintenant, elle ne sera plus affichée
cli-key-list-header = ID | ENVIRONNEMENT | ACTIVE | CRÉÉE | LIBELLÉ
cli-key-enabled = clé { $id } réactivée
cli-key-disabled = clé { $id } désactivée : la prochaine requête avec elle reçoit 401
cli-token-issued = jeton du tableau de bord { $id } : remettez-le maintenant à l'administrateur de l'organisation, il ne sera plus affiché
cli-token-list-header = ID | RÉVOQUÉ | CRÉÉ | LIBELLÉ
cli-token-revoked = jeton du tableau de bord { $id } révoqué ; ses sessions sont terminées

## log (src/cli/admin_commands.rs)
cli-log-list-header = N° | ORG | RN | TYPE | TOTAL (CDF) | CODE DEF/DGI | CERTIFIÉE LE

## main.rs
cli-error = erreur : { $text }
cli-org-nif-not-said = l'appareil n'a pas encore dit pour quel NIF il est personnalisé

## log show (src/cli/invoice_view.rs)
cli-show-title = { $document } { $rn } — registre { $register ->
    [sandbox] du bac à sable
   *[other] de production
}, entrée { $sequence }
cli-show-seller = Vendeur
cli-show-type = Type
cli-show-certified = Certifiée le
cli-show-received = Reçue le
cli-show-channel = Appareil · clé
cli-show-mode = Prix
cli-show-currency = Devise de la facture
cli-show-reference = Facture d'origine
cli-show-operator = Opérateur
cli-show-client = Client
cli-show-no-client = (aucun client sur la facture)
cli-show-client-name = Nom
cli-show-client-nif = NIF
cli-show-client-type = Type de client
cli-show-client-type-desc = Description du type
cli-show-client-contact = Contact
cli-show-client-address = Adresse
cli-show-client-email = Courriel
cli-show-client-rccm = RCCM
cli-show-items = Articles
cli-show-items-header = N° | DÉSIGNATION | TYPE | GR. | QUANTITÉ | PRIX UNITAIRE (CDF) | MONTANT (CDF)
cli-show-item-specific-tax = { $name } : taxe spécifique { $amount }
cli-show-item-price-change = { $name } : prix d'origine { $original } ({ $why })
cli-show-payments = Paiements
cli-show-no-payments = (aucun envoyé : un paiement ESPECES du total a été enregistré)
cli-show-comments = Commentaires
cli-show-groups = Montants par groupe de taxation (CDF)
cli-show-groups-header = GROUPE | HT | TVA | TTC
cli-show-total = Total TTC
cli-show-vat = Total TVA
cli-show-specific-tax = Taxes spécifiques
cli-show-usd = Équivalent USD
cli-show-security = Éléments de sécurité
cli-show-code = Code DEF/DGI
cli-show-counters = Compteurs
cli-show-nim = Numéro de l'appareil (NIM)
cli-show-device-time = Date de l'appareil
cli-show-qr = Texte du code QR
cli-show-original = Cet avoir réduit la facture :
cli-show-original-unknown = { $code } (absente de ce registre : certifiée ailleurs ou avant la passerelle)
cli-show-credit-notes = Avoirs qui réduisent cette facture :
cli-show-links-header = N° | RN | TYPE | TOTAL (CDF) | CODE DEF/DGI | CERTIFIÉE LE
cli-show-kept = Contenu gardé tel que certifié : son empreinte SHA-256 est celle de l'entrée ({ $digest }).
cli-show-not-kept = Contenu non gardé : facture certifiée par une version 1.4.0 ou antérieure, qui ne gardait que l'empreinte { $digest }.
cli-show-unreadable = Le contenu gardé ne peut pas être montré comme celui certifié : il ne correspond pas à l'empreinte de l'entrée, ou cette version ne sait pas le lire (lancez « log verify » ; détail technique : { $reason }).

## log export (src/cli/export.rs)
cli-export-dates-reversed = --from est après --to
cli-export-done = { $count ->
    [one] { $count } entrée exportée
   *[other] { $count } entrées exportées
}
cli-progress-entries = entrées lues
cli-progress-rebuild = du journal relus (reconstruction de l'index)

## erreurs au bord de la CLI (src/cli/errors.rs)
cli-error-because = { $what } : { $why }
cli-error-detail = { $text } (détail technique : { $detail })
cli-error-text = { $text }
cli-error-unexpected = la commande a échoué de façon inattendue
cli-runtime-failed = la passerelle n'a pas pu démarrer son moteur de tâches
cli-listen-failed = impossible d'écouter sur { $addr }
cli-register-open = impossible d'ouvrir le registre dans { $dir }
cli-register-held = { $dir } est tenu par une passerelle en marche dont le socket d'administration ne répond pas : vérifiez le service
cli-database-open = impossible d'ouvrir le registre dans la base PostgreSQL { $url }
cli-embedded-only = « emcf-gateway { $command } » agit sur les fichiers du registre intégré (state_dir), mais la configuration met le registre dans PostgreSQL ([store] url) : sauvegardez et restaurez la base avec ses propres outils (pg_dump, ou une sauvegarde de base avec ses WAL), voir docs/postgresql.md
cli-capture-create = impossible de créer la capture de ligne { $path }
cli-alerts-setup = impossible de préparer l'envoi des alertes par courriel ([smtp] dans la configuration)
cli-reserved-device-name = le nom d'appareil « { $name } » et les noms qui commencent par « sandbox- » sont réservés au simulateur intégré : renommez cette entrée [[devices]]
cli-replica-dir-held = un autre processus de la passerelle tourne sur le répertoire d'état { $dir } : donnez à chaque réplique son propre state_dir
cli-replica-fenced = cette réplique s'est arrêtée : son bail a expiré et une autre réplique a repris son travail (la base de données n'a pas pu être jointe à temps) ; son service la relance comme une nouvelle réplique
cli-web-api-channel = impossible de préparer le canal de l'API web de l'appareil « { $device } »
cli-simulator-start = impossible de démarrer le simulateur intégré (mémoire fiscale { $path })
cli-web-api-simulator-start = impossible de démarrer le simulateur intégré de l'API web
cli-create-dir = impossible de créer { $path }
cli-write-file = impossible d'écrire { $path }
cli-day-format = écrivez un jour sous la forme AAAA-MM-JJ
cli-state-dir-writable = le répertoire d'état { $dir } peut être modifié par d'autres utilisateurs (mode { $mode }) : ils pourraient remplacer le registre ; le service ne démarre pas. Correction : chmod 700 { $dir }
cli-state-dir-create = impossible de créer le répertoire d'état { $dir } : { $reason }
cli-state-dir-read = impossible de lire le répertoire d'état { $dir } : { $reason }

## ce que montre systemd (systemctl status), src/cli/serve.rs
cli-status-listening = à l'écoute sur { $addr }
cli-status-halted = registre endommagé : certification arrêtée

## démonstration, suite
cli-demo-org-name = Boutique de démonstration (appareil simulé, rien n'est fiscal)
cli-demo-live-label = clé de production de démonstration
cli-demo-sandbox-label = clé de bac à sable de démonstration
cli-demo-created-file = Organisation de démonstration créée sur le simulateur intégré (rien n'est fiscal). Ses clés ne sont pas affichées ici (cette sortie n'est pas un terminal : un journal pourrait les garder) : elles sont dans ce fichier, lisible par ce seul compte. Notez-les, puis supprimez le fichier.

## index rebuild, log verify, suite
cli-index-rebuild-failed = l'index n'a pas pu être reconstruit
cli-index-move-aside = impossible de mettre l'index de côté sous { $to }
cli-log-verified = journal vérifié : chaque CRC et la chaîne d'empreintes sont intacts ({ $records ->
    [one] { $records } enregistrement
   *[other] { $records } enregistrements
}, { $certified ->
    [one] { $certified } entrée au registre
   *[other] { $certified } entrées au registre
}, dont { $kept } { $kept ->
    [one] garde sa facture telle que certifiée
   *[other] gardent leur facture telle que certifiée
} ; tête { $head })

cli-log-verified-database = registre PostgreSQL vérifié : { $chains } { $chains ->
    [one] chaîne d'empreintes d'organisation intacte
   *[other] chaînes d'empreintes d'organisation intactes
}, les numéros sans trou ({ $entries ->
    [one] { $entries } entrée au registre
   *[other] { $entries } entrées au registre
}, dont { $kept } { $kept ->
    [one] garde sa facture telle que certifiée
   *[other] gardent leur facture telle que certifiée
})

## device probe (src/cli/device_commands.rs)
cli-probe-device = appareil
cli-probe-nim = identifiant machine (NIM)
cli-probe-nif = NIF du contribuable
cli-probe-clock = horloge du boîtier
cli-probe-counters = compteurs
cli-probe-counters-value = { $tc ->
    [one] { $tc } facture
   *[other] { $tc } factures
} ({ $fvc ->
    [one] { $fvc } vente
   *[other] { $fvc } ventes
}, { $frc ->
    [one] { $frc } avoir
   *[other] { $frc } avoirs
})
cli-probe-last-invoice = dernière facture
cli-probe-rates = taux de TVA
cli-probe-rates-configured = absents de son C1h : les taux de la configuration sont utilisés
cli-probe-currency = devise (C1h)
cli-probe-dgi = liaison avec la DGI
cli-probe-taxpayer = contribuable { $key }
cli-probe-status-bytes = octets d'état
cli-probe-can-certify = peut certifier maintenant
cli-probe-cannot = NON : { $why }
cli-probe-differences = écarts
cli-probe-no-difference = aucun : chaque réponse est conforme à PROTOCOL.md
cli-probe-some-differences = par rapport à PROTOCOL.md, dans des champs que la passerelle lit avec tolérance :
cli-probe-difference = { $command } { $field } : reçu { $raw } ({ $count } fois), PROTOCOL.md (en anglais) attend : « { $expected } »
cli-probe-error = erreur : { $text }
cli-probe-unknown = inconnu
cli-probe-incomplete = le boîtier n'a pas répondu à toutes les questions (voir les erreurs ci-dessus)
cli-probe-capture-ignored = remarque : le service en marche tient le port, --capture est donc ignoré ; démarrez le service avec « serve --capture FICHIER » pour capturer son trafic
cli-probe-no-devices = aucun [[devices]] dans la configuration : aucun port à sonder (le simulateur intégré de la démonstration se sonde à travers le service en marche)
cli-probe-unknown-device = aucun appareil configuré ne s'appelle « { $name } » (appareils : { $known })
cli-probe-which-device = plusieurs appareils sont configurés ({ $known }) : nommez-en un avec --device
cli-probe-silent = le boîtier sur { $path } ne répond pas ({ $detail }) ; vérifiez le câble, l'alimentation, la vitesse de la ligne et qu'aucun autre programme ne tient le port

## device anomalies
cli-anomalies-none = aucune anomalie fiscale : les compteurs de chaque boîtier suivent le registre
cli-anomalies-header = ID | DÉTECTÉE | APPAREIL | NIM | QUOI | LE REGISTRE SAVAIT | LE BOÎTIER A DIT | PRISE EN COMPTE
cli-anomaly-register-knew = NIF { $nif } TC { $tc } (entrée { $sequence })
cli-anomaly-box-said = NIF { $nif } TC { $tc } ({ $place })
cli-anomaly-ack-by = par { $by } : { $note }
cli-anomaly-acknowledged = anomalie fiscale { $id } prise en compte par { $by } le { $at } : { $note }
cli-anomaly-not-acknowledged = l'anomalie fiscale { $id } n'est pas prise en compte

## intent (src/cli/intent_commands.rs)
cli-intents-none = aucune intention ouverte : rien n'est en doute
cli-intents-header = ID | ÉTAT | ORG | REGISTRE | RN | TYPE | APPAREIL | TOTAL | UID
cli-intent-awaiting = attend un administrateur
cli-intent-settling = en cours de règlement avec son canal
cli-intent-why = intention { $id } : pourquoi (les mots du canal, en anglais) : { $reason }
cli-intent-date-time = --date-time « { $value } » : écrivez AAAA-MM-JJTHH:MM:SS (par exemple 2026-11-23T10:00:00)
cli-intent-say-which = dites ce que montre le portail de la DGI : --certified (avec ses éléments) ou --not-certified
cli-intent-not-certified = intention { $id } réglée comme non certifiée (inscrit au journal)
cli-intent-certified = intention { $id } réglée comme certifiée (inscrit au journal) :
cli-intents-need-service = le service n'est pas démarré (aucun socket d'administration à { $path }) : les factures en doute sont listées et réglées par le service en marche

## configuration (src/config) : la clé d'abord, puis ce qui ne va pas
config-read = impossible de lire le fichier de configuration { $path } : { $reason }
config-parse-at = le fichier de configuration { $path } n'est pas valable, ligne { $line }, colonne { $column }, dans « { $text } » (message de l'analyseur TOML, en anglais : { $parser })
config-parse = le fichier de configuration { $path } n'est pas valable (message de l'analyseur TOML, en anglais : { $parser })
config-unknown-at = le fichier de configuration { $path } n'est pas valable, ligne { $line } : { $what ->
    [value] valeur inconnue « { $name } » ; les valeurs permises ici sont : { $allowed }
   *[key] clé inconnue « { $name } » ; les clés permises ici sont : { $allowed }
}
config-unknown = le fichier de configuration { $path } n'est pas valable : { $what ->
    [value] valeur inconnue « { $name } » ; les valeurs permises ici sont : { $allowed }
   *[key] clé inconnue « { $name } » ; les clés permises ici sont : { $allowed }
}
config-env = la variable d'environnement { $var }=« { $value } » n'est pas valable : { $problem }
config-invalid-in-file = configuration non valable (fichier { $file }) : { $key } { $problem }
config-invalid = configuration non valable : { $key } { $problem }
config-key = { $key }
config-key-in-device = { $key } de l'entrée [[devices]] n° { $number } (« { $name } »)
config-languages = la passerelle parle fr et en
config-language-unknown = vaut « { $value } » : la passerelle parle fr et en
config-offset-bad = vaut « { $value } », qui n'est pas un décalage UTC : écrivez-le « +01:00 » (Kinshasa, ouest de la RDC) ou « +02:00 » (Lubumbashi, est de la RDC), 14 heures au plus
config-listen-bad = vaut « { $value } » : { $problem }
config-listen-expected = il faut une adresse ou un nom d'hôte et un port, par exemple 0.0.0.0:8080 (toutes les interfaces), 127.0.0.1:8080 ou localhost:8080 (cette machine seulement), [::]:8080
config-listen-unresolved = le nom d'hôte « { $host } » ne se résout pas ({ $detail }) ; donnez une adresse et un port, par exemple 0.0.0.0:8080 ou 127.0.0.1:8080
config-listen-no-address = le nom d'hôte « { $host } » n'a pas d'adresse ; donnez une adresse et un port, par exemple 0.0.0.0:8080 ou 127.0.0.1:8080
config-out-of-range = vaut { $value }{ $unit } : la valeur doit être comprise entre { $min } et { $max }{ $unit }
config-unit = { $unit ->
    [seconds] {" "}secondes
    [ms] {" "}ms
    [minutes] {" "}minutes
    [days] {" "}jours
    [bytes] {" "}octets
    [mib] {" "}Mio
    [bytes-per-second] {" "}octets par seconde
   *[none] {""}
}
config-state-dir-empty = est vide : indiquez un répertoire, ou retirez la clé pour la valeur par défaut
config-plan-zero = vaut 0 : indiquez le nombre de factures par an (au moins 1)
config-device-name-repeated = reprend le nom de l'entrée { $first } (les noms sont comparés sans tenir compte des majuscules) : donnez à chaque entrée [[devices]] son propre nom
config-web-api-keys-on-box = et les autres clés de l'API web (token_file, ...) vont avec les entrées kind = "web_api" : ajoutez kind = "web_api" ou retirez-les
config-path-empty = est vide : indiquez le port série, par exemple /dev/serial/by-id/usb-...
config-baud-zero = vaut 0 : indiquez la vitesse de la ligne du boîtier, en général 115200
config-path-on-web-api = est renseigné sur une entrée kind = "web_api" : l'API web n'a pas de port série ; retirez path
config-seq-single = n'a qu'une valeur : chaque commande a alors le même SEQ, et un boîtier qui rejoue un SEQ répété répondrait à chacune par sa dernière réponse ; mettez seq_replay = false (un boîtier qui veut un seul SEQ exécute chaque trame)
config-window-over-budget = ({ $window } ms) dépasse command_budget_ms ({ $budget } ms) : la fenêtre doit tenir dans le budget d'une commande
config-poll-over-budget = ({ $poll } ms) dépasse finalize_budget_ms ({ $budget } ms)
config-the-simulator = du simulateur intégré
config-the-device = de l'appareil « { $name } »
config-timeout-below-budget = ({ $timeout } s) doit dépasser le budget le plus long { $what } ({ $budget } ms, le budget d'un avoir ou d'une finalisation), sans quoi une certification lente serait coupée en route : augmentez request_timeout_secs
config-device-name-empty = est vide : donnez à l'appareil un nom court, par exemple « boutique »
config-device-name-long = dépasse { $max } caractères : prenez un nom court
config-device-name-chars = ne peut contenir que des lettres ASCII, des chiffres, - et _
config-seq-range-bad = vaut « { $value } », qui n'est pas une plage de SEQ : écrivez la première et la dernière valeur en hexadécimal, par exemple « 20-FF » (par défaut), « 20-7F », ou « 20-20 » pour un boîtier qui veut un seul SEQ
config-seq-range-order = vaut « { $value } » : la première valeur doit être au moins 20 et ne pas dépasser la dernière
config-rate-group = nomme « { $letter } », qui n'est pas un groupe de taxation de A à P
config-rate-not-number = donne { $letter } = « { $value } », qui n'est pas un taux comme « 16.00 »
config-rate-range = donne { $letter } = « { $value } » : un taux est un pourcentage dans [0, 100) avec au plus 2 décimales
config-url-missing = manque : indiquez la base de l'API, par exemple « https://edef.dgirdc.cd » (production) ou « https://developper.dgirdc.cd/edef » (essai)
config-url-not-url = vaut « { $value } », qui n'est pas une URL ({ $detail })
config-url-scheme = vaut « { $value } » : elle doit commencer par https:// (ou http:// pour un simulateur local) et nommer un hôte
config-url-query = vaut « { $value } » : donnez la base seule, sans requête
config-sandbox-token-missing = manque : le fichier qui contient le jeton de l'e-MCF d'essai à sandbox_url
config-sandbox-token-alone = est renseigné sans sandbox_url : donnez les deux, ou aucun (les clés de bac à sable utilisent alors le simulateur intégré)
config-token-missing = manque : le fichier qui contient le jeton (JWT) de cet e-MCF donné par le portail de la DGI, lisible par le service seul
config-pending-limit = vaut { $value } : la valeur doit être comprise entre 1 et 100 (la DGI en permet 10)
config-cdf-currency = vaut « { $value } », qui n'est pas « omit » (par défaut), « 1 », « 0 » ou « -1 »
config-anonymous-client = vaut « { $value } », qui n'est pas « omit » (par défaut) ou « pp »
config-quota-thresholds = prend des pourcentages distincts de 1 à 100, par exemple [80, 90, 100]
config-smtp-host = doit être un nom d'hôte
config-smtp-port = doit être compris entre 1 et 65535
config-smtp-from = doit être une adresse, par exemple « emcf-gateway <alertes@example.cd> »
config-public-url-form = vaut « { $value } » : donnez l'adresse à laquelle on ouvre la passerelle, avec http:// ou https:// et un nom d'hôte, sans nom d'utilisateur, paramètres ni fragment, par exemple « https://factures.example.cd »
config-public-url-dashboard = vaut « { $value } » : donnez l'adresse de la passerelle sans /dashboard (les e-mails l'ajoutent)
config-proxy-not-address = contient « { $value } », qui n'est ni une adresse IP ni une plage CIDR (par exemple 127.0.0.1, 10.0.0.0/8 ou ::1)
config-proxy-prefix = contient « { $value } » : après la barre oblique, le préfixe est un nombre de 0 à { $bits } (par exemple 10.0.0.0/8)
config-proxy-host-bits = contient « { $value } », dont l'adresse a des bits au-delà des { $prefix } premiers : écrivez { $range } pour la plage, ou { $address } pour cette seule adresse
config-smtp-username = et smtp.password_file vont ensemble (le mot de passe est lu dans ce fichier)

## les mots de device probe (src/device/probe.rs, src/certify/edef/health.rs)
probe-answered-other = { $command } a répondu { $detail }
probe-failed = { $command } : { $reason }
probe-last-none = aucune pour l'instant
probe-last-invoice = { $kind } { $rn } certifiée le { $at }, code DEF/DGI { $code }
probe-last-invoice-total = { $kind } { $rn } certifiée le { $at }, code DEF/DGI { $code }, total { $total }
probe-last-unreadable = annoncée mais illisible : { $detail }
probe-rate-unreadable = illisible { $raw }
probe-dgi = état { $state }, dernier contact { $contact }, { $sent } envoyées (EC), { $stored } en DC
probe-dgi-contact = { $at }
probe-dgi-never = jamais
probe-dgi-error = { $text }, dernière erreur { $error }
probe-field-refused = (refusé : { $text })
probe-field-answered = (a répondu { $detail })
probe-field-failed = ({ $reason })
probe-web-api = API web { $url } ; jeton valable jusqu'au { $until } ; { $pending ->
    [one] { $pending } demande en attente
   *[other] { $pending } demandes en attente
}
probe-web-api-token-until = { $at }
probe-web-api-token-not-said = (non indiqué)
probe-web-api-blocked = la DGI indique que cet e-MCF ne peut pas certifier maintenant

## config check (src/cli/config_check.rs, src/cli/config_check/)
cli-check-level-ok = OK
cli-check-level-note = info
cli-check-level-warning = ATTENTION
cli-check-level-error = ERREUR
cli-check-all-right = Tout est en ordre : serve peut démarrer avec cette configuration.
cli-check-outcome = Résultat : { $errors ->
    [one] { $errors } erreur
   *[other] { $errors } erreurs
}, { $warnings ->
    [one] { $warnings } avertissement
   *[other] { $warnings } avertissements
}.
cli-check-failed = la vérification a trouvé { $errors ->
    [one] une erreur
   *[other] { $errors } erreurs
} : corrigez chaque ligne ERREUR comme elle le dit, puis relancez emcf-gateway config check
cli-check-rest-not-done = les autres vérifications ont besoin d'une configuration que serve accepte : corrigez d'abord le fichier, puis relancez emcf-gateway config check
cli-check-file-none = aucun fichier de configuration (ni --config, ni EMCF_CONFIG, ni /etc/emcf-gateway/config.toml) : les réglages intégrés s'appliquent, avec le simulateur intégré. Pour la production, écrivez /etc/emcf-gateway/config.toml
cli-check-file-ok = fichier de configuration { $path } lu comme serve le lit : valable (mode { $mode }, propriétaire { $owner })
cli-check-file-unreadable = le fichier de configuration { $path } ne peut plus être lu : { $reason }
cli-check-file-writable = le fichier de configuration { $path } peut être modifié par d'autres utilisateurs (mode { $mode }) : ils pourraient envoyer les factures vers un autre appareil. Correction : chmod go-w { $path } (le paquet l'installe en 0640, root:emcf-gateway)
cli-check-file-world-readable = le fichier de configuration { $path } est lisible par tous les utilisateurs (mode { $mode }) et nomme les fichiers des secrets. Correction : chmod o-r { $path } (le paquet l'installe en 0640, root:emcf-gateway)
cli-check-state-dir-ok = répertoire d'état { $dir } : un dossier en 0700, propriétaire { $owner }, où ce compte peut écrire
cli-check-state-dir-missing = le répertoire d'état { $dir } n'existe pas encore : serve le créera (0700) à son premier démarrage. S'il devait déjà exister (un registre déplacé ?), corrigez state_dir
cli-check-state-dir-cannot-create = le répertoire d'état { $dir } n'existe pas et ce compte ({ $user }) ne peut pas le créer dans { $parent }. Correction : mkdir -p { $dir } && chmod 700 { $dir }, puis donnez-le à l'utilisateur du service (chown)
cli-check-state-dir-not-dir = { $dir } n'est pas un dossier : state_dir doit nommer le dossier du registre. Correction : indiquez un dossier (le paquet utilise /var/lib/emcf-gateway)
cli-check-state-dir-not-writable = ce compte ({ $user }) ne peut pas écrire dans le répertoire d'état { $dir } (propriétaire { $owner }) : le service doit tourner sous { $owner }. Lancez la vérification sous ce compte (sudo -u { $owner } emcf-gateway config check) ou en root
cli-check-state-dir-readable = le répertoire d'état { $dir } est lisible par d'autres utilisateurs (mode { $mode }) : ils voient le registre et les empreintes des clés. Correction : chmod 700 { $dir }
cli-check-service-running = service en marche (son socket d'administration répond) : les boîtiers sont interrogés à travers lui, qui tient leurs ports
cli-check-service-stopped = service arrêté (aucun socket d'administration ne répond) : les ports des boîtiers sont ouverts ici, en lecture seule
cli-check-service-stopped-no-box = service arrêté (aucun socket d'administration ne répond)
cli-check-service-unusable = le socket d'administration ne peut pas servir à ce compte ({ $user }) : { $reason }. Lancez la vérification en root ou sous le compte du service
cli-check-no-device = aucun appareil configuré : le simulateur intégré certifie, rien n'est fiscal. Pour certifier, ajoutez un bloc [[devices]] (docs/configuration.md)
cli-check-no-device-demo-off = aucun appareil configuré (demo = false) : la passerelle ne certifie aucune facture. Pour certifier, décommentez et complétez le bloc [[devices]] (docs/install.md, 2.2), puis redémarrez le service
cli-check-device-not-asked = appareil « { $name } » non vérifié : le service tient son port et son socket d'administration ne répond pas à ce compte
cli-check-how-service = à travers le service
cli-check-how-port = sur { $path } à { $baud } bauds, en lecture seule
cli-check-how-web-api = API web { $url }, appel status avec son jeton
cli-check-device-ok = appareil « { $name } » ({ $how }) : il répond, NIM { $nim }, NIF { $nif }, et peut certifier
cli-check-device-errors = appareil « { $name } » ({ $how }) : { $errors }. Correction : vérifiez le câble ou l'adresse et le jeton ; emcf-gateway device probe --device { $name } en donne le détail
cli-check-device-blocked = appareil « { $name } » ({ $how }) : il répond mais ne peut pas certifier : { $why }
cli-check-device-service-gone = appareil « { $name } » : le service s'est arrêté pendant la vérification ; relancez-la
cli-check-device-service-refused = appareil « { $name } » : le service ne l'a pas sondé : { $reason }. S'il vient d'être ajouté au fichier, redémarrez le service (systemctl restart emcf-gateway) pour qu'il le lise
cli-check-device-missing = appareil « { $name } » : { $path } n'existe pas (boîtier débranché, ou mauvais nom). Correction : branchez le boîtier, cherchez son nom stable avec ls -l /dev/serial/by-id/ et mettez-le dans path
cli-check-device-denied = appareil « { $name } » : permission refusée sur { $path } pour { $user }. Correction : sudo usermod -aG dialout { $user }, puis ouvrez une nouvelle session (l'utilisateur emcf-gateway du paquet est déjà dans dialout)
cli-check-device-busy = appareil « { $name } » : { $path } existe mais ne s'ouvre pas : un autre programme le tient (une autre passerelle, ModemManager, un terminal série) ou rien ne répond derrière. Correction : fuser -v { $path } montre qui le tient ; arrêtez-le, ou rebranchez le boîtier
cli-check-device-open-failed = appareil « { $name } » : { $path } ne s'ouvre pas : { $reason }
cli-check-device-silent = appareil « { $name } » : le port s'ouvre, mais { $said }. La vitesse configurée est baud = { $baud } : à une autre vitesse que celle du boîtier, rien de lisible ne revient
cli-check-web-api-setup = appareil « { $name } » (API web) : son client ne peut pas être préparé : { $detail }. Correction : vérifiez ca_file
cli-check-readable-ok = { $key } { $file } : lisible
cli-check-readable-not = { $key } : { $file } ne peut pas être lu par { $user } : { $reason }
cli-check-secret-ok = { $key } { $file } : présent, mode { $mode }, propriétaire { $owner }
cli-check-secret-missing = { $key } : { $file } n'existe pas. Correction : créez-le lisible par le service seul (install -m 600 -o emcf-gateway /dev/null { $file }), puis écrivez-y le secret sur la première ligne
cli-check-secret-not-file = { $key } : { $file } n'est pas un fichier. Correction : nommez le fichier qui contient le secret
cli-check-secret-unreadable = { $key } : { $file } ne peut pas être lu par { $user } : { $reason }. Lancez la vérification en root ou sous le compte du service, qui doit pouvoir le lire
cli-check-secret-empty = { $key } : { $file } est vide. Correction : écrivez-y le secret (le jeton du portail de la DGI, ou le mot de passe du relais SMTP) sur la première ligne
cli-check-secret-mode = { $key } : { $file } peut être lu par d'autres que son propriétaire (mode { $mode }) : le secret n'est pas protégé. Correction : chmod 600 { $file }
cli-check-secret-owner = { $key } : { $file } appartient à { $owner }, mais le service tourne sous { $service } (le propriétaire du répertoire d'état) : en mode 0600, il ne pourra pas le lire. Correction : chown { $service } { $file }
cli-check-smtp-none = pas de table [smtp] : aucune alerte n'est envoyée par e-mail (docs/configuration.md)
cli-check-smtp-not-tried = relais SMTP { $relay } non essayé : ajoutez --smtp pour s'y connecter et s'y identifier (aucun message n'est envoyé)
cli-check-smtp-ok = relais SMTP { $relay } : connexion (tls = { $tls }), { $login ->
    [true] identification
   *[other] sans identification
} et NOOP acceptés ; aucun message envoyé
cli-check-smtp-unreachable = relais SMTP { $relay } injoignable ({ $detail }). Correction : vérifiez smtp.host et smtp.port, et qu'aucun pare-feu ne bloque ce port en sortie
cli-check-smtp-tls = relais SMTP { $relay } : la connexion chiffrée a échoué avec tls = « { $tls } » ({ $detail }). Correction : starttls va avec le port 587, tls avec le port 465, none seulement pour un relais sur cette machine
cli-check-smtp-refused = relais SMTP { $relay } : refusé ({ $detail }). Correction : vérifiez smtp.username, le mot de passe de smtp.password_file, et que le relais accepte cette machine
cli-check-smtp-other = relais SMTP { $relay } : { $detail }. Correction : vérifiez la table [smtp]

## notice
notice-too-soon = la date d'effet { $effective } commence dans moins de { $days } jours pleins : un avis de changement se publie au moins { $days } jours pleins (de 24 heures) avant le début de sa date d'effet, à l'heure de la passerelle ; la date la plus proche possible maintenant est le { $earliest } (--effective { $earliest })
notice-empty-subject = l'objet de l'avis est vide : donnez-le avec --subject
notice-empty-body = le texte de l'avis est vide : écrivez-le dans le fichier de --body-file
notice-bad-subject = l'objet de l'avis doit tenir sur une ligne de { $max } caractères au plus, sans caractère caché ni « =? »
notice-bad-body = le texte de l'avis doit faire { $max } octets au plus, sans caractère qui cache ou retourne le texte
notice-unknown-version = --retires { $version } : cette version de l'API n'est pas servie (servies : { $served })
notice-not-found = aucun avis { $id } (voir « emcf-gateway notice list »)
notice-file = fichier des avis { $path } : { $detail }
notice-file-damaged = le fichier des avis { $path } est endommagé ({ $detail }) : remettez-le depuis une sauvegarde ; la passerelle ne démarre pas sans lui, pour n'envoyer aucun avis deux fois
admin-notices-need-service = les avis de changement passent par le service en marche, ou par la commande notice quand il est arrêté
cli-notice-body-file = impossible de lire le texte de l'avis dans { $path } (un fichier texte UTF-8)
cli-notice-added = Avis { $id } publié, prend effet le { $date } ; { $orgs ->
    [one] { $orgs } organisation à prévenir par e-mail
   *[other] { $orgs } organisations à prévenir par e-mail
}
cli-notice-mail-now = Les e-mails partent maintenant (voir « emcf-gateway notice list »).
cli-notice-mail-at-start = Le service est arrêté : les e-mails partiront à son prochain démarrage.
cli-notice-no-smtp = Aucun relais [smtp] n'est configuré : l'avis est affiché, mais ne partira par e-mail qu'une fois le relais configuré et le service redémarré.
cli-notice-service-started = le service a démarré pendant la commande : relancez-la, elle passera par lui
cli-notices-none = Aucun avis de changement.
cli-notice-mails = { $sent ->
    [one] { $sent } envoyé
   *[other] { $sent } envoyés
}, { $pending } en attente
cli-notices-header = ID | EFFET | RETIRE | E-MAILS | OBJET
cli-notice-org-sent = envoyé le { $at }
cli-notice-org-given-up = non envoyé (aucune adresse valable ou refusé par le relais)
cli-notice-org-pending = en attente
cli-notice-org = avis { $id }, { $org } : { $state }
cli-notice-late = avis { $id } : attention, { $pending ->
    [one] { $pending } e-mail est encore en attente
   *[other] { $pending } e-mails sont encore en attente
} à moins de { $days } jours de la date d'effet ({ $date }) : ces organisations n'auront pas les { $days } jours de préavis promis ; vérifiez le relais [smtp] et les journaux du service

## backup (emcf-gateway backup / restore, src/admin/backup, src/cli/backup_commands.rs)
config-backup-dir = doit être un chemin absolu de dossier, par exemple « /var/backups/emcf-gateway »
config-backup-command = doit nommer un programme puis ses arguments, par exemple ["rsync", "-a", "{"{"}dir{"}"}", "sauvegarde@serveur:/srv/emcf/"]
backup-io = { $path } n'a pas pu être lu ou écrit : { $reason }
backup-no-journal = { $dir } n'a pas de journal à sauvegarder : vérifiez state_dir dans la configuration (ou --state-dir)
backup-copy-bad = la copie { $dir } ne correspond pas à son manifeste : ne l'utilisez pas, prenez-en une autre (détail technique : { $detail })
backup-busy = une autre sauvegarde écrit déjà dans { $dir } : attendez qu'elle se termine
backup-record-bad = { $path } est illisible : la prochaine sauvegarde le réécrit (détail technique : { $detail })
backup-done = Copie vérifiée : { $dir } ({ $records } enregistrements, { $entries ->
    [one] { $entries } facture
   *[other] { $entries } factures
} au registre, { $files } fichiers ; tête du journal { $head })
backup-removed = Ancienne copie supprimée (au-delà de [backup] keep) : { $dir }
backup-command-failed = la copie { $dir } est bonne et gardée, mais la commande [backup] « { $command } » a échoué ({ $detail }) : la copie n'est peut-être pas partie vers l'autre machine ; corrigez la commande puis relancez « emcf-gateway backup »
backup-command-done = Commande [backup] réussie : { $command }
restore-service-running = le service tourne sur { $dir } : arrêtez-le d'abord (systemctl stop emcf-gateway), puis relancez la restauration
restore-copy = Copie { $dir } du { $at } : { $records } enregistrements, { $entries ->
    [one] { $entries } facture
   *[other] { $entries } factures
} au registre, vérifiée.
restore-nothing-lost-empty = Le répertoire d'état n'a pas de registre : rien n'est perdu.
restore-nothing-lost = Le registre en place est entièrement dans la copie : rien n'est perdu ({ $newer } enregistrements de la copie s'y ajoutent).
restore-loses = Attention : le registre en place a { $n ->
    [one] { $n } facture
   *[other] { $n } factures
} que la copie n'a pas ({ $records } enregistrements au-delà des { $common } qu'ils ont en commun). Restaurer les retire du registre (le registre actuel est gardé à part, rien n'est effacé).
restore-unreadable = Attention : le registre en place ne peut pas être lu ({ $why }) : ce qu'il contient de plus que la copie est inconnu. Restaurer le garde à part, rien n'est effacé.
restore-outside = Le boîtier (ses compteurs) ou la DGI peuvent détenir des factures certifiées après le { $at }, que la copie n'a pas. Étape suivante, après le démarrage : comparez les compteurs et la dernière facture du boîtier (« emcf-gateway device probe ») au registre (« emcf-gateway log list »), réglez les factures en doute (« emcf-gateway intent list »), et pour l'API web de la DGI consultez son portail. Ne renvoyez pas depuis l'ERP une facture déjà certifiée par le boîtier ou la DGI : elle serait certifiée deux fois.
restore-refused = restauration refusée : { $dir } a des factures que la copie n'a pas ; si vous acceptez de les retirer du registre (elles sont gardées à part), relancez avec --force
restore-aside = Ce qui était dans le répertoire d'état est gardé dans { $dir }.
restore-config-file = Fichier de configuration { $original } remis dans { $at } (ses droits gardés) : copiez-le à sa place si besoin.
restore-done = Restauration terminée dans { $dir } (tête du journal { $head }). Démarrez le service : l'index est reconstruit depuis le journal ; puis « emcf-gateway log verify » et une nouvelle sauvegarde.
backup-copy-format = la copie { $dir } est au format { $format }, cette version lit le format { $read } : restaurez-la avec la version qui l'a écrite
backup-copy-no-journal = la copie { $dir } ne contient pas de journal : ne l'utilisez pas, prenez-en une autre
backup-copy-path = la copie { $dir } nomme un fichier hors d'elle ({ $path }) : ne l'utilisez pas, prenez-en une autre
backup-copy-file-differs = dans la copie { $dir }, le fichier { $file } n'est plus celui que la sauvegarde a écrit (longueur ou SHA-256) : ne l'utilisez pas, prenez-en une autre
backup-copy-journal-differs = le journal de la copie { $dir } se lit jusqu'à { $records } enregistrements (tête { $head }), son manifeste en annonce { $expected_records } (tête { $expected_head }) : ne l'utilisez pas, prenez-en une autre
restore-written-differs = { $path } écrit par la restauration ne correspond pas à la copie : vérifiez le disque, puis relancez la restauration
backup-dest-in-state = la destination { $dest } est dans le répertoire d'état { $dir } : choisissez un dossier hors de lui, de préférence sur un autre disque
restore-src-in-state = la copie { $src } est dans le répertoire d'état { $dir }, que la restauration vide : déplacez-la d'abord hors de lui
backup-prune-failed = Attention : la copie est bonne, mais les anciennes copies n'ont pas toutes pu être supprimées ({ $why }) : vérifiez les droits du dossier des sauvegardes (lancez la sauvegarde avec le compte du service)

## backup (restore staged and resumable, copies of this state directory, the command, src/admin/backup)
restore-resuming = Une restauration précédente (copie { $copy }) ne s'est pas terminée : elle est refaite. Le registre qui était là avant elle est gardé dans { $aside }.
restore-config-in-place = Fichier de configuration remis à sa place : { $at } (l'ancien est gardé à côté, suffixé .before-restore-<heure>).
restore-config-not-named = Le fichier de configuration { $original } n'est pas remis à sa place : la configuration actuelle ne le nomme pas. Il est dans le dossier restored-config-* du répertoire d'état : copiez-le vous-même si besoin.
backup-state-busy = un autre processus de la passerelle tient { $dir } (le service qui démarre, ou une commande) sans répondre sur son socket d'administration : relancez la sauvegarde dans un instant
backup-copy-unreadable = Attention : le manifeste de { $dir } ne peut pas être lu (droits ou dommage) : ce dossier n'est ni compté ni supprimé. Vérifiez son propriétaire et ses droits (une sauvegarde lancée en root ?).
backup-disk-full = le disque qui contient { $path } est plein : libérez de la place sur ce disque (ou choisissez une autre destination), puis relancez (détail technique : { $reason })
restore-config-not-writable = --config-in-place remettrait { $path }, mais ce compte ne peut pas écrire dans son dossier : rien n'a été restauré. Lancez la restauration en root (sudo), ou sans --config-in-place
backup-command-timeout = la copie { $dir } est bonne et gardée, mais la commande [backup] « { $command } » tournait encore après { $secs } s ([backup] command_timeout_secs) : elle a été arrêtée, la copie n'est peut-être pas partie vers l'autre machine ; vérifiez la commande (réseau, machine distante), puis relancez « emcf-gateway backup »
restore-marker-bad = { $path } est illisible : une restauration de { $dir } ne s'est pas terminée, et l'on ne sait plus dans quel dossier before-restore-… se trouve le registre d'avant. Rien n'est restauré ni effacé. Ne supprimez aucun dossier before-restore-… et demandez à { -gateway-operator } (détail technique : { $detail })

# A register behind its box (issue 27)
cli-anomaly-box-said-missing = NIF { $nif } TC { $tc } ({ $place }), manquent au registre : { $missing }
cli-anomaly-bad-numbers = « { $text } » n'est pas une liste de numéros de compteur (par exemple « 7-9, 12 »)
cli-anomaly-acknowledged-numbers = certifications manquantes prises en compte : n° { $numbers } ; l'appareil certifie de nouveau, à partir de son compteur { $tc }
cli-restore-counters-title = Derniers compteurs de chaque appareil dans le registre restauré :
cli-restore-counters-none = Le registre restauré ne connaît encore aucun appareil de production.
cli-restore-counters-line = { "  " }NIM { $nim } : compteur { $tc } (NIF { $nif }, entrée { $sequence })
cli-restore-counters-check = Au démarrage, le service compare le compteur de chaque boîtier à ces valeurs : un boîtier en avance sur le registre restauré (des certifications que cette copie n'a pas) ne certifie plus rien et « emcf-gateway device anomalies list » le montre ; restaurez alors une copie plus récente, ou prenez acte des numéros manquants.
cli-restore-counters-unread = Les compteurs du registre restauré n'ont pas pu être lus ({ $why }) ; le service les compare à chaque boîtier au démarrage.
cli-restore-box-unread = Le boîtier « { $device } » n'a pas pu être lu sur son port ({ $why }) ; le service le vérifiera au démarrage.
cli-restore-box-first-use = Le boîtier « { $device } » (NIM { $nim }, compteur { $tc }) est inconnu du registre restauré : une première utilisation, rien à comparer.
cli-restore-box-follows = Le boîtier « { $device } » (NIM { $nim }) est au compteur { $tc } : il n'est pas en avance sur le registre restauré.
cli-restore-box-ahead = ATTENTION : le boîtier « { $device } » (NIM { $nim }) est au compteur { $tc }, le registre restauré à { $known } : les certifications n° { $missing } manquent à cette copie. Le service ne certifiera plus rien sur ce boîtier tant que vous n'aurez pas restauré une copie plus récente ou pris acte de ces numéros (emcf-gateway device anomalies ack).
cli-anomaly-bad-rn = --rn s'écrit NUMÉRO=RN (le numéro d'une certification manquante, puis son rn tel que le portail de la DGI le montre), pas « { $text } »
cli-anomaly-lost-rns = jamais certifiées de nouveau (leur appareil les a certifiées) : { $rns }
cli-anomaly-rns-unknown = ATTENTION : le rn du n° { $numbers } est inconnu de la passerelle : une nouvelle tentative de cette facture sous son ancien rn serait certifiée une seconde fois. Cherchez chacun sur le portail de la DGI et prévenez l'émetteur de la facture de ne jamais la renvoyer.
config-store-url-missing = est absente alors que la table [store] a d'autres clés : ajoutez url = « postgresql://utilisateur@hôte:5432/base » (ou la variable EMCF_STORE_URL), ou retirez la table [store] pour garder le registre dans state_dir
config-store-url-scheme = doit commencer par « postgresql:// » (ou « postgres:// »), par exemple « postgresql://emcf@db.exemple.cd:5432/emcf »
config-store-url-password = contient un mot de passe : retirez-le de l'URL et écrivez-le seul dans un fichier que seul l'utilisateur du service peut lire (chmod 600), nommé par password_file dans [store]
config-store-url-param = ne doit pas donner { $param } : écrivez-le dans la clé { $key } de la table [store]
config-store-url-user = doit nommer l'utilisateur PostgreSQL avant l'hôte, par exemple « postgresql://emcf@db.exemple.cd:5432/emcf »
config-store-url-host = doit nommer le serveur : son hôte (« postgresql://emcf@db.exemple.cd:5432/emcf ») ou le dossier de son socket (« postgresql://emcf@/emcf?host=/run/postgresql »)
config-store-url-database = doit nommer la base après l'hôte, par exemple « postgresql://emcf@db.exemple.cd:5432/emcf »
config-store-path-empty = est vide : donnez le chemin du fichier, ou retirez la clé
config-store-tls-socket = vaut « { $mode } », mais l'URL passe par un socket Unix, que PostgreSQL ne chiffre pas : écrivez sslmode = « disable », ou nommez un hôte TCP
config-store-ca-missing = manque : avec sslmode = « verify-full », le certificat du serveur est vérifié avec ce fichier d'autorités de certification (PEM)
config-store-ca-unused = ne sert qu'avec sslmode = « verify-full » (ici « { $mode } ») : écrivez sslmode = « verify-full », ou retirez ca_file
config-store-password-unreadable = ({ $file }) ne peut pas être lu : { $reason }
config-store-password-not-file = ({ $file }) n'est pas un fichier
config-store-password-mode = ({ $file }) a les droits { $mode } : le mot de passe doit être lisible par son propriétaire seul (chmod 600 { $file })
config-store-password-owner = ({ $file }) appartient à l'utilisateur n° { $owner }, pas à celui qui fait tourner la passerelle (n° { $user }) : chown { $user } { $file }
config-store-password-empty = ({ $file }) est vide : écrivez-y le mot de passe de l'utilisateur PostgreSQL
config-store-password-not-text = ({ $file }) n'est pas un mot de passe : du texte UTF-8 de 4 Kio au plus est attendu
config-store-key-mode = ({ $file }) a les droits { $mode } : les clés doivent être lisibles par leur propriétaire seul (chmod 600 { $file })
config-store-key-not-text = ({ $file }) n'est pas un fichier de clés : une clé de 64 caractères hexadécimaux par ligne est attendue, 4 Kio au plus
config-store-key-line = ({ $file }), ligne { $line } : ce n'est pas une clé de 64 caractères hexadécimaux (32 octets) ; créez-en une avec : openssl rand -hex 32
config-store-key-repeated = ({ $file }), ligne { $line } : cette clé est déjà écrite plus haut
config-store-key-empty = ({ $file }) ne contient aucune clé : écrivez-y une clé de 64 caractères hexadécimaux (openssl rand -hex 32)
config-store-check-server = le serveur PostgreSQL répond : { $version }, synchronous_commit = { $synchronous_commit }
config-store-check-unusable = le serveur PostgreSQL ne peut pas garder le registre : { $detail }
config-store-check-password = registre sur PostgreSQL : { $url }, mot de passe lu dans { $file }
config-store-check-keys = clés de scellement des jetons lues dans { $file } : { $keys } (la première scelle)
config-store-check-no-password = registre sur PostgreSQL : { $url }, sans mot de passe (le serveur authentifie autrement)
config-store-schema-up-to-date = le schéma est à la version { $version }, celle qu'attend ce programme
config-store-schema-read-only = le schéma est à la version { $version }, mais le rôle { $user } ne peut pas écrire le registre : donnez-lui les droits du rôle de service (docs/postgresql-service-role.sql, en superutilisateur)
config-store-schema-missing = la base de données n'a pas encore de schéma : lancez « emcf-gateway store migrate » en tant que propriétaire de la base (un service démarré sous ce rôle le crée lui-même ; docs/postgresql.md)
config-store-schema-behind = le schéma est à la version { $applied }, ce programme attend la { $binary } : lancez « emcf-gateway store migrate » en tant que propriétaire de la base avant de le démarrer
config-store-schema-newer = le schéma est à la version { $applied }, plus récente que celle qu'attend ce programme ({ $binary }) : une version plus récente de la passerelle l'a migré, et celle-ci refuse de démarrer dessus
config-store-schema-unreadable = le schéma ne peut pas servir : { $detail }

## store import, store export (src/cli/store_commands.rs)
cli-store-migrated = Schéma de la base mis à jour : version { $version } ({ $applied ->
    [one] { $applied } migration appliquée
   *[other] { $applied } migrations appliquées
}).
cli-store-migrated-already = Le schéma de la base est déjà à jour (version { $version }) : rien n'a été changé.
cli-store-needs-database = « emcf-gateway store { $command } » déplace un registre vers ou depuis la base PostgreSQL de la table [store], mais la configuration n'en nomme aucune : ajoutez [store] url (ou la variable EMCF_STORE_URL)
cli-store-no-register = { $dir } ne contient pas de registre (pas de journal/journal.log)
cli-store-database-not-empty = la base PostgreSQL n'est pas vide : elle contient déjà des organisations ou des événements. L'import ne copie un registre que dans une base neuve ; rien n'a été écrit
cli-store-dir-not-empty = { $dir } n'est pas vide : l'export écrit un registre neuf dans un dossier vide ou absent
cli-store-not-imported = rien n'a été importé de { $dir } : la transaction a été annulée, la base est restée vide
cli-store-differs = les deux registres ne donnent pas les mêmes réponses après la copie :
    { $differences }
    Ne faites pas servir cette copie : après un import, recréez la base avant de recommencer (docs/postgresql.md) ; après un export, supprimez le dossier écrit.
cli-store-imported = Registre de { $dir } importé dans PostgreSQL ({ $records } enregistrements du journal) :
    organisations : { $organizations }, clés d'API : { $keys }, jetons du tableau de bord : { $tokens }
    intentions : { $intents } (abandonnées : { $abandoned }), entrées du registre : { $entries }, anomalies fiscales : { $anomalies }
cli-store-register-count = { $org }, registre { $environment ->
    [sandbox] du bac à sable
   *[other] de production
} : { $entries ->
    [one] { $entries } entrée
   *[other] { $entries } entrées
}
cli-store-checked = Vérifié, identique dans les deux registres : chacune des { $entries } entrées, le quota utilisé de { $years } année(s) par organisation, les { $open } intention(s) ouverte(s), les clés, les jetons, les compteurs des boîtiers et les anomalies fiscales ; { $chains } chaîne(s) d'empreintes recalculée(s) dans PostgreSQL.
cli-store-exported = Registre de PostgreSQL exporté dans { $dir } : { $records } enregistrements dans le nouveau journal, vérifié, dont { $entries } entrées du registre.
cli-store-renumbered = { $count } intention(s) écrite(s) directement dans PostgreSQL (pas par un import) ont reçu un autre numéro dans le nouveau journal : le champ « intent » de leurs entrées change (docs/postgresql.md) ; numéros du registre, codes DEF, compteurs et factures sont inchangés.
store-move-difference = { $what } : { $here } dans le registre intégré, { $there } dans PostgreSQL
store-move-more = et { $count } autre(s) écart(s)
store-move-organizations = les organisations
store-move-keys = les clés d'API de { $org }
store-move-tokens = les jetons du tableau de bord de { $org }
store-move-count = le nombre d'entrées de { $org } au registre { $environment ->
    [sandbox] du bac à sable
   *[other] de production
}
store-move-length = la longueur du registre { $environment ->
    [sandbox] du bac à sable
   *[other] de production
}
store-move-entry = l'entrée { $sequence } du registre { $environment ->
    [sandbox] du bac à sable
   *[other] de production
}
store-move-quota = le quota utilisé par { $org } en { $year }
store-move-open-intents = les intentions ouvertes
store-move-boxes = les compteurs des boîtiers
store-move-anomalies = les anomalies fiscales
store-move-verify = la vérification du registre dans PostgreSQL (log verify)
store-move-verified = le nombre d'entrées vérifiées dans PostgreSQL
store-move-renumbered-entry = l'entrée { $sequence } du registre { $environment ->
    [sandbox] du bac à sable
   *[other] de production
} aurait le numéro { $written } dans le nouveau journal : export arrêté
store-move-entry-without-intent = l'entrée { $sequence } du registre { $environment ->
    [sandbox] du bac à sable
   *[other] de production
} nomme l'intention { $intent }, absente de PostgreSQL

## device add, update, remove, list; store rotate-key (src/cli/stored_devices.rs)
cli-device-embedded = le registre est intégré (pas de [store] url) : ses appareils sont les blocs [[devices]] du fichier de configuration, qu'on modifie avant de redémarrer le service. Garder un appareil comme donnée (device add, update, remove, list) demande un registre PostgreSQL (docs/postgresql.md)
cli-device-no-key = [store] secret_key_file n'est pas défini : le jeton d'un appareil n'est gardé que scellé, sous une clé de ce fichier (une ligne de 64 caractères hexadécimaux : openssl rand -hex 32 ; fichier en 600, docs/configuration.md)
cli-device-token-unreadable = le fichier du jeton { $file } ne peut pas être lu
cli-device-kind-box = un boîtier (kind = "box") reste un bloc [[devices]] de la configuration de la réplique où il est branché : seuls les e-MCF de l'API web (--kind web_api) sont gardés dans le registre
cli-device-kind-unknown = « { $kind } » n'est pas un type d'appareil gardé dans le registre : web_api est attendu
cli-device-added = Appareil « { $device } » gardé dans le registre, son jeton scellé par la clé { $key }. Chaque réplique en service s'en sert d'ici quelques secondes ; rattachez-y une organisation : emcf-gateway org add --device { $device }
cli-device-update-nothing = rien à changer : donnez --url, --token-file ou les deux
cli-device-updated = Appareil « { $device } » changé (jeton scellé par la clé { $key }) : les nouvelles factures passent par lui d'ici quelques secondes, celles en cours finissent comme elles ont commencé
cli-device-removed = Appareil « { $device } » retiré du registre : aucune réplique ne lui confie plus de nouvelle facture
cli-device-list-none = aucun appareil n'est gardé dans le registre (emcf-gateway device add)
cli-device-list-header = NOM | TYPE | CLÉ | CHANGÉ LE | URL
cli-store-key-rotated = { $count ->
    [0] Aucun jeton à resceller : tous le sont déjà par la clé { $key }.
    [one] { $count } jeton rescellé par la clé { $key }.
   *[other] { $count } jetons rescellés par la clé { $key }.
} Une fois chaque réplique redémarrée avec cette clé en tête, l'ancienne ligne peut être retirée du fichier.
cli-check-devices-kept = { $count ->
    [one] aucun [[devices]] dans ce fichier ; l'e-MCF de l'API web gardé dans la base certifie : { $names } (emcf-gateway device list)
   *[other] aucun [[devices]] dans ce fichier ; les { $count } e-MCF de l'API web gardés dans la base certifient : { $names } (emcf-gateway device list)
}
