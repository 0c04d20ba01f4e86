# api
# Les errorDesc de l'API hors règles du corps de la facture (validation.ftl) : src/certify/error.rs,
# src/api. Les seuls textes que la passerelle transmet sans les traduire sont ceux du boîtier et de la
# DGI ($text), cités entre guillemets comme leurs propres mots. Un détail technique (l'erreur du
# système, d'une bibliothèque : en anglais) ne va jamais dans un errorDesc : le journal du service
# le donne, avec l'X-Request-Id de la réponse ; un $detail passé à un message ci-dessous n'y est pas
# affiché.
# Les mêmes ids, avec les mêmes variables, dans locales/fr et locales/en (tests de src/i18n/catalogue.rs).

## Certification (src/certify/error.rs)

err-api-key-missing = clé API absente : envoyez l'en-tête 'Authorization: Bearer <clé>'
err-api-key-invalid = clé API invalide
err-api-key-disabled = cette clé API est désactivée
err-duplicate-rn = la facture { $rn } a déjà été certifiée avec un contenu différent ; une nouvelle facture exige un nouveau rn
err-idempotency-key-reused = cette Idempotency-Key a déjà servi pour une autre requête (facture { $rn }) ; une nouvelle requête exige une nouvelle clé
err-idempotency-key-malformed = l'en-tête Idempotency-Key doit compter de 1 à 255 caractères ASCII imprimables, éventuellement entre guillemets doubles
err-in-flight = la facture { $rn } est en cours de certification ; réessayez plus tard pour obtenir son résultat
err-quota-exhausted = le quota annuel de factures de cette organisation est atteint ({ $used } sur { $quota } en { $year }) ; demandez à { -gateway-operator } la formule Grow ou un quota plus grand
err-device-refused = le boîtier e-MCF a refusé la facture, avec ces mots à lui, cités tels quels : « { $text } »
err-device-refused-silently = le boîtier e-MCF a refusé la facture sans donner de texte (une réponse vide avec le bit de refus)
err-payments-short = les paiements ({ $paid }) ne couvrent pas le total de la facture calculé par le boîtier ({ $total })
err-zero-total = le total de la facture est nul : le boîtier exige un paiement positif pour la finaliser, une facture faite uniquement de lignes gratuites ne peut donc pas être certifiée
err-totals-mismatch = le { $field } du boîtier ({ $device }) diffère du calcul de la passerelle ({ $expected }) ; la facture a été annulée
err-totals-mismatch-absent = le { $field } du boîtier (absent de sa réponse 33h) diffère du calcul de la passerelle ({ $expected }) ; la facture a été annulée
err-totals-mismatch-dgi = le { $field } de la DGI ({ $dgi }) diffère du calcul de la passerelle ({ $expected }) ; la demande a été annulée et rien n'a été certifié
err-dgi-refused = la DGI a refusé la facture : erreur DGI { $code }, avec ce texte de la DGI, cité tel quel : « { $text } »
err-token-rejected = l'API web de la DGI n'accepte pas le jeton de cette passerelle pour l'appareil { $device } : { $reason } ; { -gateway-operator } doit installer un nouveau jeton (réessayer n'y changera rien)
err-awaiting-administrator = facture { $rn } : la réponse de la DGI à sa confirmation a été perdue et la DGI ne la liste plus comme en attente ; on ne sait donc pas si elle a été certifiée. Un administrateur doit régler son sort (emcf-gateway intent resolve). Ne la renvoyez pas sous un autre rn
err-totals-too-large = les totaux de la facture sont trop grands pour la réponse de sous-total du boîtier (trop de groupes de taxe avec de gros montants) ; scindez la facture
err-wrong-device = le boîtier e-MCF est personnalisé pour le NIF { $device_nif }, et non pour le NIF { $org_nif } de cette organisation ; le rattachement de l'appareil doit être corrigé
err-device-not-configured = l'appareil { $device } de cette organisation n'est pas configuré sur cette passerelle ; { -gateway-operator } doit l'ajouter à la configuration ou rattacher l'organisation à un appareil configuré, et, pour un boîtier branché sur une autre réplique du service, envoyer les requêtes de cette organisation à cette réplique (réessayer n'y changera rien)
err-no-sandbox = cette passerelle n'a pas de bac à sable : une clé de test (mcf_test_) ne peut pas certifier ici ; utilisez une clé de production ou adressez-vous à { -gateway-operator } (réessayer n'y changera rien)
err-device-not-ready = le boîtier e-MCF ne peut pas certifier pour le moment : { $reason }
err-device-unavailable = le boîtier e-MCF est indisponible : { $reason }
err-queue-full = le boîtier e-MCF est occupé (file d'attente pleine) ; réessayez dans un instant
err-outcome-unknown = le boîtier e-MCF n'a pas confirmé la facture { $rn } ; la passerelle vérifie auprès du boîtier, renvoyez la même requête pour obtenir le résultat
err-register-unavailable = le registre des factures est indisponible (le journal du service en donne la cause) ; cette demande n'a pas été traitée (une facture certifiée auparavant garde sa certification), réessayez plus tard
err-database-unavailable = la base de données du registre (PostgreSQL) ne répond pas ; cette demande n'a pas été traitée (une facture certifiée auparavant garde sa certification), réessayez dans quelques secondes
err-not-found = aucune facture certifiée avec le rn { $rn }
err-internal = erreur interne de la passerelle ; signalez-la avec l'X-Request-Id de cette réponse (le journal du service en donne le détail)
err-credit-exceeds-original = cette facture d'avoir { $bound ->
    [at-least] d'au moins
   *[exact] de
} { $total } dépasse ce qui reste à rembourser de la facture d'origine { $original_rn } (codeDEFDGI { $reference }) : son total est de { $original_total }, les factures d'avoir déjà certifiées sur elle font { $credited } et celles en cours de certification { $pending } ; il reste { $room }. Rien n'a été envoyé. Réduisez ses montants, ou vérifiez sa référence
err-above-max-total = le total de cette facture ({ $bound ->
    [at-least] au moins { $total }, avant TVA
   *[exact] { $total }
}) dépasse le plafond par facture de cette organisation ({ $max }). Rien n'a été envoyé. Vérifiez ses montants (prix, quantités, unité) ; si la facture est juste, { -gateway-operator } peut relever le plafond (emcf-gateway org update --max-invoice-total)

## Pourquoi la DGI n'accepte pas le jeton ($reason de err-token-rejected)

token-file-unreadable = le fichier du jeton de cet appareil ne peut pas être lu (le journal du service dit pourquoi)
token-file-empty = le fichier du jeton de cet appareil est vide : collez-y le jeton de l'e-MCF copié depuis le portail de la DGI
token-malformed = le fichier du jeton de cet appareil contient des caractères qu'un en-tête HTTP ne peut pas porter (un retour à la ligne au milieu, un caractère de contrôle)
token-rejected-by-dgi = la DGI a refusé le jeton de l'e-MCF (HTTP { $status }) : il a expiré ou a été révoqué, un nouveau jeton est nécessaire

## Pourquoi le boîtier ne peut pas certifier pour le moment ($reason de err-device-not-ready, err-device-unavailable)

reason-link-down = la liaison avec le boîtier n'est pas établie (le journal du service en donne la cause)
reason-no-answer = le boîtier n'a pas répondu à la commande { $command }
reason-disconnected = la liaison avec le boîtier est coupée
reason-outcome-unknown = l'issue de la finalisation (38h) est inconnue
reason-state-unreadable = l'état du boîtier (C1h) est illisible (le journal du service dit quel champ)
reason-bad-reply = la réponse du boîtier à la commande { $command } est illisible (le journal du service dit pourquoi)
reason-not-sent = une commande n'a pas pu être envoyée au boîtier (le journal du service dit laquelle)
reason-stopping = la passerelle est en cours d'arrêt
reason-state-refused = il a refusé de donner son état (C1h), avec ces mots à lui, cités tels quels : « { $text } »
reason-state-refused-silently = il a refusé de donner son état (C1h), sans texte
reason-rate-unreadable = son C1h donne pour le groupe { $group } le taux de TVA { $value }, qui n'est pas un taux
reason-not-confirmed-cancelled = le boîtier n'a pas confirmé la facture ; elle a été annulée et rien n'a été certifié
reason-settling-earlier = la passerelle règle avec le boîtier le sort d'une facture précédente
reason-replica-lease = ce processus de la passerelle ne peut pas confirmer qu'il peut encore certifier (sa base de données ne répond pas à temps) : une autre réplique prend la demande
reason-sandbox-start-failed = le boîtier du bac à sable n'a pas pu démarrer (le journal du service en donne la cause)
reason-stored-device-unopened = le jeton de l'e-MCF, gardé scellé dans le registre, ne s'ouvre avec aucune clé de cette réplique ([store] secret_key_file) : le journal du service en donne la cause
reason-dgi-no-answer = aucune réponse de l'API web de la DGI à la demande ; rien n'a été certifié
reason-dgi-unreadable = la réponse de la DGI à la demande est illisible ; rien n'a été certifié
reason-dgi-request-expired = la demande auprès de la DGI a été retenue trop longtemps et a été annulée ; rien n'a été certifié
reason-dgi-confirm-unreachable = la DGI n'a pas pu être jointe pour confirmer ; rien n'a été certifié
reason-organization-changing = les réglages de l'organisation ont changé plusieurs fois pendant l'admission de cette facture ; rien n'a été réservé, renvoyez-la
reason-quota-changing = de nombreuses factures de l'organisation ont été certifiées pendant l'admission de celle-ci ; rien n'a été réservé, renvoyez-la

## La couche HTTP (src/api)

err-no-such-path = chemin inconnu ; l'API se trouve sous /api/v1
err-method-not-allowed = méthode non permise sur ce chemin ; méthodes permises : { $allowed }
err-body-too-large = le corps de la requête dépasse { $limit } octets
err-body-too-slow = le corps de la requête est arrivé trop lentement (moins de { $rate } octets par seconde) ; envoyez le corps entier d'un seul coup
err-not-json = le corps doit être du JSON : envoyez 'Content-Type: application/json'
err-body-unreadable = le corps de la requête n'a pas pu être lu en entier (connexion coupée, ou découpage « chunked » invalide) ; renvoyez-le
err-request-timeout = la requête a pris trop de temps ; s'il s'agissait d'une facture, faites GET /api/v1/Invoice/{"{"}rn{"}"} ou renvoyez plus tard la même requête pour obtenir son résultat
err-register-halted = le registre des factures est endommagé et la certification est arrêtée jusqu'à sa restauration par { -gateway-operator } (le journal du service dit ce qui est endommagé)
err-too-many-connections = trop de connexions depuis votre adresse ({ $max } au plus à la fois) ; fermez les connexions inactives ou réessayez dans un instant

## La page d'accueil (src/api/landing.rs)
landing-title = Passerelle e-MCF
landing-what = Ce service certifie les factures de l'entreprise auprès de la DGI, par son boîtier e-MCF ou l'API web e-MCF. Les logiciels de caisse et ERP du réseau local l'appellent ; les administrateurs suivent tout dans le tableau de bord.
landing-ready = La certification fonctionne en ce moment.
landing-not-ready = La certification ne fonctionne pas en ce moment : le tableau de bord et le journal du service disent pourquoi.
landing-dashboard = Tableau de bord (administrateurs des organisations)
landing-openapi = Description de l'API (OpenAPI, pour les intégrateurs)
landing-status = État du service (JSON)
landing-docs = La documentation (installation, configuration, codes d'erreur) est dans le dossier docs/ livré avec le programme.

## Le règlement d'une facture en doute par un administrateur (src/certify/settlement.rs)
resolve-no-name = indiquez qui règle cette facture (un nom) : il est journalisé avec la décision
resolve-not-awaiting = la facture en doute { $id } n'attend pas d'administrateur (voir « emcf-gateway intent list ») : la passerelle la règle encore avec son canal, ou elle est déjà réglée
resolve-element-missing = { $name } manque : recopiez-le depuis le portail de la DGI
resolve-element-bad = { $name } n'est pas une valeur que la DGI affiche : elle s'écrit en caractères ASCII imprimables (sans accent, sans caractère de contrôle), en 500 caractères au plus
resolve-code-def-bad = codeDEFDGI « { $code_def } » ({ $length } caractères) : un codeDEFDGI fait 24 caractères, lettres majuscules A à Z et chiffres, par exemple « XN56YAPV37MZLNZLX6MOC3A5 » (ou groupés par 4 avec des tirets, « XN56-YAPV-37MZ-LNZL-X6MO-C3A5 »)
resolve-code-def-taken = codeDEFDGI « { $code_def } » : c'est déjà celui d'une facture du registre (pour un avoir, celui de la facture d'origine) ; saisissez le codeDEFDGI que le portail de la DGI montre pour cette facture-ci
resolve-nim-bad = nim « { $nim } » : le NIM d'un e-MCF de la DGI s'écrit avec deux lettres majuscules, 8 chiffres, un tiret et son numéro, par exemple « CD01002923-1 »
resolve-counters-bad = compteurs « { $counters } » : écrivez-les comme la DGI les affiche, « FC/TC { $invoice_type } » : deux nombres à partir de 1, FC au plus TC, puis le type de cette facture, { $invoice_type } (par exemple « 12/345 { $invoice_type } » ; pour une facture FV, « 12/345 FV »)
resolve-qr-form = qrCode « { $qr_code } » : le texte du QR code s'écrit PRÉFIXE;NIM;codeDEFDGI;NIF;AAAAMMJJHHMMSS, 5 champs séparés par « ; » (il en a { $fields }), le préfixe en lettres majuscules, chiffres et tirets, la date et l'heure en 14 chiffres, par exemple « DGI-RDC;CD01002923-1;XN56YAPV37MZLNZLX6MOC3A5;A1234567B;20261123100000 »
resolve-qr-like = qrCode « { $qr_code } » : le texte du QR code s'écrit comme celui des factures déjà certifiées par ce canal, en { $fields } champs séparés par « ; » et avec le même préfixe, par exemple « { $example } »
resolve-qr-mismatch = qrCode : { $part ->
    [nim] son NIM
    [codeDEFDGI] son codeDEFDGI
   *[nif] son NIF
} « { $found } » n'est pas { $part ->
    [nim] le NIM saisi
    [codeDEFDGI] le codeDEFDGI saisi
   *[nif] le NIF de l'organisation
} (« { $expected } ») : recopiez le code QR de cette facture-ci
resolve-text-too-long = le nom et la note font au plus { $max } caractères
resolve-text-bad = { $field ->
    [by] le nom
   *[note] la note
} doit tenir sur une ligne : sans retour à la ligne, caractère de contrôle ni marque de sens d'écriture (et, pour le nom, sans « ; »)

## Les avertissements sur une facture certifiée (src/certify/warnings.rs) : warningDesc, à côté de warningCode
warn-original-not-in-register = la facture d'avoir { $rn } rembourse la facture de codeDEFDGI { $reference }, que ce registre ne contient pas : elle a été certifiée telle qu'envoyée, sans que son montant ait pu être comparé au total de l'origine. Si l'origine a été certifiée avant la passerelle ou ailleurs, rien à faire ; sinon vérifiez la référence (une faute de frappe rembourserait une autre facture) et le montant
warn-usd-amounts-in-cdf = la facture { $rn } est en USD mais ne vaut en tout que { $usd } USD (total { $total } CDF) : les montants sont toujours en CDF, et curRate est le cours en CDF pour un USD. Si ses prix ont été envoyés en USD, elle a été certifiée pour bien moins que prévu : annulez-la par une facture d'avoir (FA) et certifiez-la de nouveau sous un nouveau rn avec ses montants en CDF

## notice
err-unknown-api-version = cette version de l'API n'est pas servie ; versions servies : { $served }
notice-page-kind = Avis de changement de la passerelle de facturation
notice-page-effective = Prend effet le { $date }.
notice-page-retires = À cette date, la version { $version } de l'API sera retirée : ses réponses portent d'ici là les en-têtes Deprecation et Sunset.
notice-page-published = Publié le { $date }

## pkg: a service without a device (src/api/mod.rs, Halt::NoDevice)
err-no-device-configured = aucun appareil configuré : cette passerelle ne certifie aucune facture. Prochaine étape : nommez le boîtier e-MCF dans { $file } (un bloc [[devices]], voir docs/install.md), puis redémarrez le service (systemctl restart emcf-gateway).

## outage: the register cannot be written (src/certify/storage_fault.rs, unrecorded.rs)
register-fault-no-space = le disque de la passerelle est plein
register-fault-read-only = le disque de la passerelle est en lecture seule
register-fault-io = le disque de la passerelle renvoie des erreurs d'écriture
register-fault-database = la base de données PostgreSQL du registre ne répond pas
register-fault-reason = le registre des factures ne peut pas être écrit ({ $why }) : aucune facture n'est certifiée tant qu'il ne peut pas l'être ; la certification reprend d'elle-même dès qu'il le peut, sans redémarrage
err-register-unwritable = le registre des factures ne peut pas être écrit ({ $why }) : rien n'a été envoyé au boîtier et aucun quota n'a été utilisé ; réessayez plus tard, la certification reprend d'elle-même dès que le registre peut être écrit
err-certified-not-recorded = { $channel ->
    [web_api] la DGI a certifié
   *[box] le boîtier a certifié
} la facture { $rn }, mais le registre n'a pas encore pu l'enregistrer ; renvoyez la même requête plus tard : vous obtiendrez la même certification

## issue 27: a service that always answers (src/api/conn_io.rs, src/api/peers.rs)
err-head-timeout = les en-têtes de la requête ne sont pas arrivés à temps ; la connexion est fermée. Envoyez la requête entière d'un seul coup
err-head-unreadable = les en-têtes de la requête n'ont pas pu être lus (ligne de requête ou en-tête mal formé) ; corrigez la requête
err-uri-too-long = le chemin de la requête est trop long ; raccourcissez-le
err-head-too-large = les en-têtes de la requête sont trop grands (trop d'en-têtes, ou trop longs) ; envoyez moins d'en-têtes ou des valeurs plus courtes
err-server-busy = le service a toutes ses connexions occupées ({ $max } au plus à la fois) ; réessayez dans un instant
status-stopping = le service s'arrête : il termine les factures en cours et n'en accepte pas de nouvelles

# A register behind its channel (issue 27)
err-register-behind = le boîtier e-MCF a certifié des factures que le registre de la passerelle n'a pas (compteurs n° { $missing }) : il ne certifie plus rien tant qu'un administrateur n'a pas réglé la question. Ne renvoyez pas la facture sous un autre rn ; réessayez plus tard et prévenez { -gateway-operator }
err-register-behind-web-api = l'e-MCF du service en ligne de la DGI a certifié des factures que le registre de la passerelle n'a pas (compteurs n° { $missing }) : plus rien n'est certifié tant qu'un administrateur n'a pas réglé la question. Ne renvoyez pas la facture sous un autre rn ; réessayez plus tard et prévenez { -gateway-operator }

# A lost rn, acknowledged with its rn (issue 27)
err-lost-rn = l'appareil a certifié la facture { $rn } sous son n° { $number } mais le registre de la passerelle l'a perdue : elle n'est jamais certifiée de nouveau ; ses éléments sont sur le portail de la DGI
