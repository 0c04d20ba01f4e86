# Le tableau de bord de l'organisation (src/dashboard). Ids préfixés par dash-.
# Les mêmes ids, avec les mêmes variables, dans locales/fr et locales/en (tests de src/i18n/catalogue.rs).

## Cadre des pages

dash-brand = Passerelle e-MCF
dash-subtitle = tableau de bord de l'organisation
dash-lang-switch = Langue
dash-nav-overview = Vue d'ensemble
dash-nav-keys = Clés API
dash-nav-invoices = Factures
dash-nav-sign-out = Se déconnecter
dash-back-overview = Retour à la vue d'ensemble
dash-back-keys = Retour aux clés
dash-never = jamais

## Erreurs

dash-err-busy-title = Occupé
dash-err-busy = Le tableau de bord répond à trop de demandes en ce moment. Réessayez dans un instant.
dash-err-not-found-title = Introuvable
dash-err-no-such-page = Cette page n'existe pas dans le tableau de bord.
dash-err-not-found = Ce que vous demandez n'existe pas dans votre organisation.
dash-err-no-entry = Votre organisation n'a pas de facture n° { $sequence } dans son registre { $register ->
    [sandbox] du bac à sable
   *[other] de production
}.
dash-err-method-title = Méthode non permise
dash-err-method = Cette page n'accepte pas ce genre de requête.
dash-err-not-possible-title = Impossible
dash-err-unavailable-title = Momentanément indisponible
dash-err-unavailable = La passerelle n'a pas pu lire ou écrire son registre à l'instant. Réessayez dans un moment ; si cela persiste, prévenez { -gateway-operator }.
dash-err-csrf-title = Requête refusée
dash-err-csrf = Ce formulaire n'a pas été envoyé depuis une page de ce tableau de bord, ou la page était trop ancienne (contrôle de sécurité). Revenez en arrière, rechargez la page et réessayez.
dash-err-form-type-title = Formulaire non pris en charge
dash-err-form-type = Ce formulaire n'a pas été envoyé comme une page de ce tableau de bord l'envoie. Revenez en arrière, rechargez la page et réessayez.
dash-err-form-large-title = Formulaire trop grand
dash-err-form-large = Le formulaire dépasse ce que cette page accepte.
dash-err-form-slow-title = Formulaire trop lent
dash-err-form-slow = Le formulaire est arrivé trop lentement. Envoyez-le de nouveau.
dash-err-form-cut-title = Formulaire illisible
dash-err-form-cut = Le formulaire n'a pas pu être lu (coupé). Envoyez-le de nouveau.

## Connexion

dash-sign-in-title = Connexion
dash-signin-intro = Connectez-vous avec le jeton de tableau de bord que { -gateway-operator } vous a donné.
dash-signin-operator = Pour { -gateway-operator }
dash-signin-operator-how = Un jeton se crée sur le serveur de la passerelle avec :
dash-signin-token = Jeton du tableau de bord
dash-signin-submit = Se connecter
dash-signin-expired = Votre session a expiré ou a été fermée. Connectez-vous de nouveau.
dash-signin-lost-at-restart = La passerelle a redémarré et n'a pas pu reprendre les sessions ouvertes avant : connectez-vous de nouveau.
dash-signin-not-kept = La passerelle ne peut pas enregistrer les sessions en ce moment : si elle redémarre, vous devrez vous reconnecter. Prévenez { -gateway-operator }.
dash-signin-signed-out = Vous êtes déconnecté.
dash-signin-foreign = Ce formulaire de connexion n'a pas été envoyé depuis ce tableau de bord.
dash-signin-cookie = Ce formulaire de connexion n'est plus valable : la page a été ouverte il y a plus d'une heure, la passerelle a redémarré depuis, ou votre navigateur refuse les cookies de ce site. Rechargez la page (autorisez les cookies pour ce site si besoin), puis connectez-vous.
dash-signin-empty = Saisissez ou collez votre jeton de tableau de bord.
dash-signin-invalid = Ce jeton de tableau de bord n'est pas valide : il est peut-être mal saisi ou coupé, ou il a été révoqué. Collez-le de nouveau en entier, ou demandez-en un nouveau à { -gateway-operator }.
dash-signin-whose-address = cette adresse
dash-signin-whose-org = cette organisation
dash-signin-throttled = Trop de connexions avec un mauvais jeton depuis { $whose }. Attendez { $seconds } s, puis collez de nouveau le jeton en entier.

## Vue d'ensemble

dash-overview-title = Vue d'ensemble
dash-settled-certified = La facture en doute est réglée comme certifiée, avec votre nom au registre : le prochain essai de ce numéro par l'ERP reçoit ses éléments.
dash-settled-not-certified = La facture en doute est réglée comme non certifiée, avec votre nom au registre : l'ERP peut l'envoyer de nouveau.
dash-org-title = Organisation
dash-org-name = Nom
dash-org-id = Identifiant
dash-org-plan = Formule
dash-plan = { $plan ->
    [grow] Grow
   *[other] Start
}
dash-quota-title = Quota { $year }
dash-quota-used = { $used } sur { $quota } factures de production utilisées, { $n_left ->
        [one] { $left } restante
       *[other] { $left } restantes
    } cette année
dash-quota-sandbox = Les factures du bac à sable ne comptent jamais.
dash-devices-title = Appareils
dash-device-register = Registre
dash-device-state = État
dash-device-since = Depuis
dash-device-last-reply = Dernière réponse de l'appareil
dash-device-queued = Factures en attente
dash-register-production = Production
dash-register-sandbox = Bac à sable
dash-link-connected = répond
dash-link-disconnected = ne répond pas
dash-link-not-configured = non configuré
dash-link-unused = pas encore utilisé
dash-link-unused-hint = créé à la première facture de test
dash-device-not-ready = Les factures ne peuvent pas être certifiées maintenant : { $channel ->
    [web_api] { $code ->
        [link_down] le service en ligne de la DGI ne répond pas.
        [box_blocked] la DGI indique que votre e-MCF ne peut pas certifier pour l'instant.
        [nif_mismatch] le jeton installé est celui d'un autre NIF que celui de votre organisation ; { -gateway-operator } doit installer le jeton de votre e-MCF ou corriger le NIF.
        [settling] la passerelle règle d'abord une facture précédente avec la DGI.
        [token_rejected] la DGI refuse l'accès de la passerelle ; { -gateway-operator } doit installer un nouveau jeton.
       *[other] le service en ligne de la DGI n'est pas prêt.
    }
   *[box] { $code ->
        [link_down] l'appareil ne répond pas.
        [box_blocked] l'appareil répond, mais refuse de certifier pour l'instant.
        [nif_mismatch] l'appareil est enregistré pour un autre NIF que celui de votre organisation ; { -gateway-operator } doit corriger le NIF ou l'appareil.
        [settling] la passerelle règle d'abord une facture précédente avec l'appareil.
        [token_rejected] la DGI refuse l'accès de la passerelle ; { -gateway-operator } doit installer un nouveau jeton.
       *[other] l'appareil n'est pas prêt.
    }
}
dash-alert-quota = { $percent } % du quota annuel { $year } est utilisé ({ $used } factures sur { $quota }).
dash-alert-quota-full = Le quota annuel { $year } est atteint ({ $used } factures sur { $quota }) : les nouvelles factures sont refusées. { $plan ->
    [start] Demandez la formule Grow à { -gateway-operator } pour continuer à certifier.
   *[other] Demandez à { -gateway-operator } d'augmenter le quota pour continuer à certifier.
}
dash-alert-channel-down = { $channel ->
    [web_api] Le service en ligne de la DGI ne répond plus depuis le { $since } : aucune facture ne peut être certifiée.
   *[box] L'appareil de production ne répond plus depuis le { $since } : aucune facture ne peut être certifiée.
}
dash-alert-channel-down-no-date = { $channel ->
    [web_api] Le service en ligne de la DGI ne répond plus : aucune facture ne peut être certifiée.
   *[box] L'appareil de production ne répond plus : aucune facture ne peut être certifiée.
}
dash-alert-dgi-contact = Le dernier échange de l'appareil de production avec la DGI date du { $at } : vérifiez sa connexion au réseau.
dash-alert-dgi-contact-never = L'appareil de production n'a encore jamais échangé avec la DGI : vérifiez sa connexion au réseau.
dash-alert-in-doubt = { $count ->
    [one] Une facture est en doute (son issue n'est pas connue).
   *[other] { $count } factures sont en doute (leur issue n'est pas connue).
} { $waiting ->
    [0] { $count ->
        [one] La passerelle la règle encore d'elle-même.
       *[other] La passerelle les règle encore d'elle-même.
    }
    [one] Celle qui attend votre décision est sous « Factures en doute » ci-dessous.
   *[other] Celles qui attendent votre décision sont sous « Factures en doute » ci-dessous.
}
dash-reconciling = La passerelle règle une facture précédente avec cet appareil ; les nouvelles factures attendent.
dash-anomaly-title = Anomalie fiscale
dash-anomaly-intro = Le boîtier contredit ce que le registre sait de lui. Les factures sont toujours certifiées (le boîtier fait foi) ; prévenez { -gateway-operator }, qui vérifie avec la DGI et en prend acte.
dash-anomaly-item = N° { $id }, le { $at } : { $what } (au registre : NIF { $known_nif }, compteur { $known_tc } ; selon l'appareil : NIF { $seen_nif }, compteur { $seen_tc }).
dash-dgi-token-valid = L'accès de la passerelle au service en ligne de la DGI est valable jusqu'au { $until }.
dash-dgi-token-soon = Il expire dans moins de 7 jours : { -gateway-operator } doit installer un nouveau jeton depuis le portail de la DGI.
dash-dgi-unknown = Dernier échange de l'appareil avec la DGI : pas encore connu (l'appareil ne l'a pas encore indiqué depuis le démarrage de la passerelle).
dash-dgi-contact = Dernier échange de l'appareil avec la DGI : { $at } (heure de l'appareil).
dash-dgi-state = { $state ->
    [CON] L'appareil est relié à la DGI.
    [TRA] L'appareil envoie des factures à la DGI.
    [DIS] L'appareil n'est pas relié à la DGI en ce moment (c'est normal entre deux envois).
   *[other] L'état de sa liaison avec la DGI n'est pas connu (voir les détails techniques).
}
dash-dgi-sent = { $n ->
    [one] Il dit avoir transmis { $sent } facture à la DGI.
   *[other] Il dit avoir transmis { $sent } factures à la DGI.
}
dash-dgi-error = Il signale un problème de liaison avec la DGI (voir les détails techniques).
dash-tech-title = Détails techniques
dash-tech-intro = Pour { -gateway-operator } ou un technicien : les noms et les valeurs tels que les appareils et le protocole les donnent.
dash-tech-device = { $register ->
    [sandbox] Appareil du bac à sable
   *[other] Appareil de production
}
dash-tech-link-error = { $register ->
    [sandbox] Dernière erreur de liaison (bac à sable)
   *[other] Dernière erreur de liaison (production)
}
dash-tech-pending = Demandes en attente à l'API web de la DGI (pending)
dash-tech-not-ready = Pourquoi il ne certifie pas (texte du journal)
dash-tech-token = Jeton de l'API web de la DGI valable jusqu'au
dash-tech-c2h = Liaison avec la DGI (réponse C2h)
dash-tech-anomaly = Anomalie n° { $id }
dash-registers-title = Registres
dash-registers-invoices = Factures certifiées :
dash-registers-production = { $n ->
        [one] { $count } en production
       *[other] { $count } en production
    }
dash-registers-sandbox = { $n ->
        [one] { $count } dans le bac à sable
       *[other] { $count } dans le bac à sable
    }
dash-registers-separate = le bac à sable a son propre registre et ne compte pas dans le quota
dash-registers-keys = Clés API :
dash-registers-keys-enabled = { $enabled ->
        [one] { $enabled } activée
       *[other] { $enabled } activées
    } sur { $total }

## Factures en doute

dash-doubt-title = { $n ->
        [one] { $n } facture en doute
       *[other] { $n } factures en doute
    }
dash-doubt-intro = La réponse de la DGI à ces confirmations a été perdue et la DGI ne les liste plus comme en attente : on ne sait pas si elles ont été certifiées. Ne les renvoyez pas sous un autre numéro. Cherchez chacune sur le portail de la DGI (par son numéro ou la référence de sa demande), puis indiquez ici ce que montre le portail ; le prochain essai du même numéro par l'ERP reçoit alors la réponse. Elles peuvent aussi être réglées par { -gateway-operator }.
dash-doubt-item = Facture n° { $rn }, { $total }, reçue le { $received } ; référence de la demande à la DGI : { $request }
dash-doubt-settle-rn = Régler la facture n° { $rn }
dash-doubt-portal = Ce que montre le portail de la DGI
dash-doubt-certified = Certifiée, avec ces éléments :
dash-doubt-code = Code DEF/DGI
dash-doubt-nim = Numéro de l'appareil (NIM)
dash-doubt-qr = Code QR (son texte)
dash-doubt-counters = Compteurs (p. ex. 12/345 FV)
dash-doubt-date = Date et heure sur le portail
dash-doubt-not-certified = Non certifiée : le portail ne montre aucune facture de ce numéro (l'ERP peut alors l'envoyer de nouveau)
dash-doubt-by = Votre nom (journalisé)
dash-doubt-note = Note
dash-doubt-submit = Régler
dash-doubt-not-settled-title = Non réglée
dash-doubt-not-mine = Cette facture n'est pas en doute pour votre organisation (déjà réglée ?).
dash-doubt-need-date = Indiquez la date et l'heure que le portail de la DGI montre pour elle.
dash-doubt-say-outcome = Indiquez ce que montre le portail de la DGI : certifiée, ou non certifiée.
dash-doubt-not-awaiting = Cette facture n'attend plus personne : la passerelle l'a réglée, ou quelqu'un d'autre l'a fait.
dash-doubt-register-failed = Le registre n'a pas pu l'enregistrer : { $error }. Rien n'a été changé ; réessayez.

## Clés API

dash-keys-title = Clés API
dash-key-id = Identifiant
dash-key-environment = Environnement
dash-key-label = Libellé
dash-key-created = Créée le
dash-key-enabled-heading = Activée
dash-key-action = Action
dash-key-disable = Désactiver
dash-key-enable = Activer
dash-key-disabled = La clé { $id } est désactivée : les requêtes faites avec elle sont désormais refusées.
dash-key-enabled = La clé { $id } est de nouveau activée.
dash-keys-none = Aucune clé API pour l'instant.
dash-key-not-found = Votre organisation n'a pas de clé { $id }.
dash-issue-legend = Émettre une nouvelle clé API
dash-issue-production = production (mcf_live_ : l'appareil fiscal, compte dans le quota)
dash-issue-sandbox = bac à sable (mcf_test_ : le simulateur, registre à part)
dash-issue-placeholder = p. ex. caisse ERP 2
dash-issue-submit = Émettre la clé
dash-issue-choose-env = Choisissez production ou bac à sable.
dash-issued-title = Clé API émise
dash-issued = Clé émise.
dash-issued-key = Clé { $id } ({ $environment }) :
dash-issued-copy = Copiez-la dans l'ERP maintenant. La passerelle n'en garde qu'une empreinte : elle ne sera plus jamais affichée ; si elle est perdue, émettez-en une autre et désactivez celle-ci.
dash-toggle-say = Indiquez s'il faut activer ou désactiver la clé.
dash-disable-title = Désactiver la clé { $id } ?
dash-disable-question = Désactiver la clé { $id } ({ $label }) ? Les caisses qui l'utilisent seront refusées aussitôt.
dash-disable-question-unlabelled = Désactiver la clé { $id } ? Les caisses qui l'utilisent seront refusées aussitôt.
dash-disable-undo = Vous pourrez la réactiver ensuite sur la page des clés.
dash-disable-confirm = Désactiver la clé
dash-disable-cancel = Annuler
dash-disable-already = La clé { $id } est déjà désactivée.

## LogInvoices

dash-invoices-title = Registre des factures (LogInvoices)
dash-invoices-none = Aucune facture de ce registre ne correspond.
dash-tab-production = Registre de production
dash-tab-sandbox = Registre du bac à sable
dash-tabs-note = (le registre du bac à sable est à part et ne compte jamais dans le quota)
dash-search-legend = Chercher dans le registre { $register ->
    [sandbox] du bac à sable
   *[other] de production
}
dash-search-rn = Numéro de facture (rn)
dash-search-from = Certifiée du
dash-search-to = au
dash-search-submit = Chercher
dash-search-clear = Effacer
dash-export = Exporter le registre { $register ->
    [sandbox] du bac à sable
   *[other] de production
} en CSV (dates de la recherche)
dash-page-newest = Les plus récentes
dash-page-older = Plus anciennes →
dash-search-bad-title = Recherche incorrecte
dash-search-bad-env = Ce registre n'existe pas : choisissez le registre de production ou celui du bac à sable.
dash-search-bad-date = Date attendue au format AAAA-MM-JJ (YYYY-MM-DD), reçu « { $value } ».
dash-search-dates-reversed = La date de début est après la date de fin.
dash-search-bad-before = Ce lien de page n'est pas valable : revenez aux factures les plus récentes.
dash-export-bad-title = Export impossible
dash-entry-sequence = N° d'ordre
dash-entry-rn = N° de facture
dash-entry-type = Type
dash-entry-total = Total TTC
dash-entry-code = Code DEF/DGI
dash-entry-certified = Certifiée le
dash-entry-device-time = Heure de l'appareil
dash-invoice-title = { $document } { $rn }
dash-invoice-back = Registre { $register ->
    [sandbox] du bac à sable
   *[other] de production
}
dash-security-title = Éléments de sécurité
dash-qr-caption = Code QR de la facture
dash-field-code = Code DEF/DGI
dash-field-nim = Numéro de l'appareil (NIM)
dash-field-counters = Compteurs de l'appareil
dash-field-device-time = Date et heure de l'appareil
dash-field-qr = Texte du code QR
dash-invoice-section = Facture
dash-field-register = Registre
dash-field-sequence = Numéro d'ordre
dash-field-seller = NIF / ISF du vendeur
dash-field-received = Reçue le
dash-field-key = Clé API
dash-field-device = Appareil
dash-field-digest = Empreinte de la requête (SHA-256)
dash-totals-title = Totaux (de l'appareil)
dash-field-total = Total TTC
dash-field-vat = TVA
dash-field-specific-tax = Taxe spécifique
dash-field-usd = Équivalent en USD

## invoice page: the certified invoice (src/dashboard/invoice_page.rs)
dash-print = Imprimer le bloc fiscal :
dash-print-a4 = facture A4
dash-print-80mm = ticket 80 mm
dash-content-title = Facture certifiée (telle qu'envoyée)
dash-content-mode = Prix
dash-content-currency = Devise de la facture
dash-content-operator = Opérateur
dash-content-client = Client
dash-content-no-client = aucun client sur la facture
dash-content-comments = Commentaires
dash-content-payments = Paiements :
dash-content-no-payments = aucun envoyé (un paiement ESPECES du total a été enregistré)
dash-content-not-kept = Le contenu de cette facture n'est pas gardé : elle a été certifiée par une version 1.4.0 ou antérieure, qui ne gardait que son empreinte (ci-dessus).
dash-content-unreadable = Le contenu gardé ne peut pas être montré comme celui certifié : il ne correspond pas à l'empreinte de l'entrée, ou cette version ne sait pas le lire. Prévenez { -gateway-operator }, qui lance « emcf-gateway log verify » (détail technique : { $reason }).
dash-item-name = Désignation
dash-item-type = Type
dash-item-group = Groupe
dash-item-quantity = Quantité
dash-item-price = Prix unitaire (CDF)
dash-item-amount = Montant (CDF)
dash-item-specific-tax = taxe spécifique { $amount }
dash-item-price-change = prix d'origine { $original } ({ $why })
dash-group = Groupe
dash-group-ht = HT (CDF)
dash-group-vat = TVA (CDF)
dash-group-ttc = TTC (CDF)
dash-credit-of = Cet avoir ({ $kind }) réduit la facture
dash-credit-of-unknown = (absente de ce registre : certifiée ailleurs ou avant la passerelle)
dash-credit-notes-title = Avoirs qui réduisent cette facture
dash-export-json = en JSON
dash-export-bad-format = Le format d'export doit être csv, excel ou json.

## Le registre : son export pour un tableur (src/dashboard/invoices.rs)
dash-export-excel = CSV pour Excel
dash-export-excel-hint = S'ouvre directement en colonnes dans Excel ou LibreOffice en français.

## notice
dash-notice-banner = Avis de changement : { $subject } — prend effet le { $date }.
dash-notice-read = Lire l'avis

## backup
dash-alert-backup-old = La dernière sauvegarde du registre date du { $at }, il y a plus de deux jours : demandez à { -gateway-operator } de lancer une sauvegarde (emcf-gateway backup) et de vérifier la sauvegarde quotidienne.
dash-alert-backup-never = Le registre n'a encore jamais été sauvegardé : demandez à { -gateway-operator } de lancer une sauvegarde (emcf-gateway backup) et de vérifier la sauvegarde quotidienne.
dash-alert-backup-command = La dernière sauvegarde n'a pas pu être envoyée vers une autre machine : demandez à { -gateway-operator } de corriger la commande d'envoi ([backup] command).

## outage: the register cannot be written (src/dashboard/alerts.rs)
dash-alert-register-unwritable = Depuis le { $since }, le registre des factures ne peut pas être écrit ({ $fault ->
    [no_space] le disque de la passerelle est plein
    [read_only] le disque de la passerelle est en lecture seule
   *[io] le disque de la passerelle renvoie des erreurs d'écriture
}) : aucune facture n'est certifiée ; la certification reprend d'elle-même dès que le registre peut être écrit. Prévenez { -gateway-operator }.

# A register behind its box (issue 27)
dash-anomaly-intro-stopped = Le registre de la passerelle n'a pas des factures que l'appareil a certifiées (une copie plus ancienne restaurée, un disque qui a perdu ses derniers enregistrements). Plus rien n'est certifié sur cet appareil tant que { -gateway-operator } n'a pas restauré une copie plus récente du registre ou pris acte des factures manquantes ; prévenez-le.
