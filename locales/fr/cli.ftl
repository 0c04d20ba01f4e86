# cli
# The same ids, with the same variables, in locales/fr and locales/en (src/i18n/catalogue.rs tests).

## Démarrage de démonstration (src/cli/demo.rs)
cli-demo-created = Organisation de démonstration créée sur le simulateur intégré (rien n'est fiscal). Ses clés ne sont affichées qu'une fois : notez-les maintenant.
cli-demo-try = Essayez :
cli-demo-lost = Clé perdue ? Une nouvelle : emcf-gateway key issue --org { $org }
cli-demo-existing = L'organisation de démonstration « { $org } » existe déjà : ses clés ont été affichées à son premier démarrage. Pour une nouvelle clé API :
cli-demo-dashboard = Pour le tableau de bord ({ $url }), un jeton de connexion :

## Répertoire d'état (src/cli/state_dir.rs)
cli-no-state-dir = aucun registre dans { $dir } : cette commande ne crée rien. Lancez-la depuis le dossier du service, ou indiquez le répertoire d'état (--state-dir, EMCF_STATE_DIR, ou state_dir dans le fichier de configuration). Seuls « serve » et « org add » créent un registre.

## index rebuild
cli-index-service-running = arrêtez d'abord le service : il tient { $dir }
cli-index-agrees = l'index concorde avec le journal : rien à reconstruire, rien n'a été changé (--force le reconstruit quand même)
cli-index-rebuilt = index reconstruit à partir du journal (l'ancien est gardé à part : { $aside }) ; le journal est vérifié

## org (src/cli/org_commands.rs)
cli-org-exists = l'organisation « { $id } » existe déjà : pour la modifier, emcf-gateway org update { $id } ...
cli-org-not-found = aucune organisation « { $id } »
cli-org-bad-plan = --plan doit valoir start ou grow
cli-org-bad-email = --admin-email { $address } : ce n'est pas une adresse e-mail (nom@exemple.cd)
cli-org-bad-max-total = --max-invoice-total { $value } : écrivez un montant en CDF supérieur à 0, avec 2 décimales au plus et un point comme séparateur (par exemple 1500000 ou 1500000.50)
cli-org-no-max-total = aucun
cli-org-unknown-device = aucun appareil « { $device } » dans la configuration (appareils : { $known }) ; une organisation ne peut certifier que sur un appareil configuré
cli-org-nif-differs = l'appareil « { $device } » est personnalisé pour le NIF { $device_nif }, pas pour { $nif } : chaque facture serait refusée (code 153). Corrigez le NIF, ou l'appareil de l'organisation.
cli-org-nif-unchecked = attention : le NIF n'a pas pu être vérifié auprès de l'appareil « { $device } » ({ $reason }) ; il le sera à la première facture (code 153 s'il diffère).
cli-org-service-stopped = le service n'est pas démarré
cli-org-saved = organisation « { $id } » enregistrée
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
cli-key-issued = clé { $id } : notez-la maintenant, elle ne sera plus affichée
cli-key-list-header = ID | ENVIRONNEMENT | ACTIVE | CRÉÉE | LIBELLÉ
cli-key-enabled = clé { $id } réactivée
cli-key-disabled = clé { $id } désactivée : la prochaine requête avec elle reçoit 401
cli-token-issued = jeton du tableau de bord { $id } : remettez-le maintenant à l'administrateur de l'organisation, il ne sera plus affiché
cli-token-list-header = ID | RÉVOQUÉ | CRÉÉ | LIBELLÉ
cli-token-revoked = jeton du tableau de bord { $id } révoqué ; ses sessions sont terminées

## log (src/cli/admin_commands.rs)
cli-log-list-header = N° | ORG | RN | TYPE | TOTAL (CDF) | CODEDEFDGI | CERTIFIÉE LE

## main.rs
cli-error = erreur : { $text }
cli-org-nif-not-said = l'appareil n'a pas encore dit pour quel NIF il est personnalisé

## log show (src/cli/invoice_view.rs)
cli-show-title = { $document } { $rn } — registre { $environment }, entrée { $sequence }
cli-show-seller = Vendeur
cli-show-type = Type
cli-show-certified = Certifiée le
cli-show-received = Reçue le
cli-show-channel = Appareil · clé · source
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
cli-show-item-specific-tax = { $name } : taxe spécifique { $amount }
cli-show-item-price-change = { $name } : prix d'origine { $original } ({ $why })
cli-show-payments = Paiements
cli-show-no-payments = (aucun envoyé : un paiement ESPECES du total a été enregistré)
cli-show-comments = Commentaires
cli-show-groups = Montants par groupe de taxation (CDF)
cli-show-groups-header = GROUPE | HT | TVA | TTC
cli-show-total = Total TTC
cli-show-vat = Total TVA
cli-show-specific-tax = Taxes spécifiques
cli-show-usd = Équivalent USD
cli-show-security = Éléments de sécurité
cli-show-counters = Compteurs
cli-show-device-time = Date de l'appareil
cli-show-original = Cet avoir réduit la facture :
cli-show-original-unknown = { $code } (absente de ce registre : certifiée ailleurs ou avant la passerelle)
cli-show-credit-notes = Avoirs qui réduisent cette facture :
cli-show-links-header = N° | RN | TYPE | TOTAL (CDF) | CODEDEFDGI | CERTIFIÉE LE
cli-show-kept = Contenu gardé tel que certifié : son empreinte SHA-256 est celle de l'entrée ({ $digest }).
cli-show-not-kept = Contenu non gardé : facture certifiée par une version 1.4.0 ou antérieure, qui ne gardait que l'empreinte { $digest }.
cli-show-unreadable = Le contenu gardé ne peut pas être montré comme celui certifié : { $reason } (lancez « log verify »).

## log export (src/cli/export.rs)
cli-export-dates-reversed = --from est après --to
cli-export-done = { $count ->
    [one] { $count } entrée exportée
   *[other] { $count } entrées exportées
}
cli-progress-entries = entrées lues
cli-progress-rebuild = du journal relus (reconstruction de l'index)
