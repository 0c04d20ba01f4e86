# help
# L'aide de la CLI (--help, src/cli/help.rs). Les ids suivent l'arbre de clap : help-<chemin de
# la commande> pour une commande, help-<chemin>--<argument> pour un argument (help--<argument>
# pour les arguments globaux), help-value-<repère> pour le repère d'une valeur. Les mêmes ids
# dans locales/fr et locales/en ; un test échoue sur une commande ou un argument sans texte.

## les mots de clap
help-usage = Utilisation :
help-commands = Commandes{"\u00A0"}
help-options = Options{"\u00A0"}
help-arguments = Arguments{"\u00A0"}
help-value-command = COMMANDE
help-print-help = Afficher l'aide
help-print-version = Afficher la version
help-help = Afficher cette aide ou celle des commandes données
help-help-command = Afficher l'aide de cette commande
help-possible-values = { $help } (valeurs possibles : { $values })
help-default = { $help } (par défaut : { $value })

## les refus de clap
usage-missing-value = { $arg } attend une valeur
usage-repeated = { $arg } ne peut être donné qu'une fois
usage-invalid-value = « { $value } » n'est pas une valeur possible pour { $arg }
usage-invalid-value-among = « { $value } » n'est pas une valeur possible pour { $arg } (valeurs possibles : { $valid })
usage-value-refused = « { $value } » n'est pas une valeur acceptée pour { $arg } : { $why }
usage-not-accepted = elle n'est pas acceptée
usage-whole-number = un nombre entier est attendu
usage-number-too-large = ce nombre est trop grand
usage-intent-id = { $why } (voir « emcf-gateway intent list »)
usage-anomaly-id = { $why } (voir « emcf-gateway device anomalies list »)
usage-unknown-argument = argument inattendu { $arg }
usage-unknown-subcommand = commande inconnue « { $name } »
usage-no-equals = { $arg } prend sa valeur après un signe égal (=)
usage-too-many-values = trop de valeurs pour { $arg } (« { $value } »)
usage-wrong-number-of-values = nombre de valeurs incorrect pour { $arg }
usage-conflict = { $arg } ne peut pas être utilisé avec { $other }
usage-missing-argument = arguments obligatoires manquants : { $arg }
usage-missing-subcommand = « { $name } » attend une commande
usage-invalid-utf8 = un argument n'est pas un texte UTF-8 valable
usage-other = la ligne de commande ne peut pas être lue ({ $detail })
usage-did-you-mean = { $text } (vouliez-vous dire { $suggested } ?)
usage-try-help = Pour en savoir plus, essayez --help.

## repères des valeurs
help-value-file = FICHIER
help-value-dir = DOSSIER
help-value-lang = LANGUE
help-value-addr = ADRESSE
help-value-address = ADRESSE
help-value-id = ID
help-value-name = NOM
help-value-nif = NIF
help-value-isf = ISF
help-value-plan = FORMULE
help-value-quota = QUOTA
help-value-device = APPAREIL
help-value-org = ORG
help-value-label = LIBELLÉ
help-value-after = APRÈS
help-value-limit = NOMBRE
help-value-sequence = NUMÉRO
help-value-rn = RN
help-value-format = FORMAT
help-value-separator = SÉPARATEUR
help-value-from = DU
help-value-to = AU
help-value-by = QUI
help-value-note = NOTE
help-value-intent = INTENTION
help-value-code-def = CODE_DEF
help-value-qr-code = CODE_QR
help-value-counters = COMPTEURS
help-value-amount = MONTANT
help-value-nim = NIM
help-value-date-time = DATE_HEURE

## emcf-gateway
help = Certifie les factures des ERP du réseau de la boutique avec l'appareil fiscal e-MCF de la RDC
help--config = Fichier de configuration (par défaut : $EMCF_CONFIG, sinon /etc/emcf-gateway/config.toml s'il existe, sinon les réglages intégrés avec le simulateur intégré)
help--state_dir = Répertoire d'état : journal, index, socket d'administration (remplace le fichier et $EMCF_STATE_DIR)
help--lang = Langue des messages et de cette aide : fr (par défaut) ou en (remplace $EMCF_LANG et la langue du fichier)

help-serve = Faire tourner la passerelle : API HTTP, liaisons avec les appareils, socket d'administration
help-serve--listen = Adresse d'écoute (remplace le fichier et $EMCF_LISTEN) : une adresse ou un nom d'hôte, et un port : 0.0.0.0:8080, localhost:8080, [::]:8080
help-serve--capture = Écrire dans ce fichier chaque octet échangé sur le port de chaque appareil, avec des horodatages monotones (le format de capture de docs/install.md ; lisible par son seul propriétaire)

help-org = Organisations
help-org-add = Créer une organisation (refusé si son id existe : utilisez org update) ; crée le registre à sa première utilisation
help-org-add--id = Id court : a-z, 0-9, -
help-org-add--name = Nom affiché
help-org-add--nif = NIF du vendeur (doit être celui de son appareil ; vérifié auprès de l'appareil quand le service tourne)
help-org-add--isf = ISF du vendeur
help-org-add--plan = Formule : start ou grow
help-org-add--quota = Quota annuel qui remplace celui de la formule
help-org-add--device = Nom de l'appareil configuré sur lequel elle certifie ; sans appareil configuré, « embedded » : le simulateur intégré (rien n'est fiscal)
help-org-add--admin_emails = Adresse e-mail d'un administrateur pour les alertes (répétable)
help-org-add--max_invoice_total = Le plus grand total (TTC, en CDF) qu'une facture peut avoir ; une facture plus élevée est refusée (code 181). Aucun par défaut
help-org-update = Modifier une organisation : seules les options données changent
help-org-update--id = Id de l'organisation
help-org-update--name = Nom affiché
help-org-update--nif = NIF du vendeur
help-org-update--isf = ISF du vendeur
help-org-update--plan = Formule : start ou grow
help-org-update--quota = Quota annuel qui remplace celui de la formule
help-org-update--plan_quota = Revenir au quota de la formule
help-org-update--device = Nom de l'appareil configuré
help-org-update--admin_emails = Adresses e-mail des administrateurs pour les alertes (répétable ; remplace la liste)
help-org-update--no_admin_email = Retirer toutes les adresses e-mail d'administrateur
help-org-update--max_invoice_total = Le plus grand total (TTC, en CDF) qu'une facture peut avoir ; une facture plus élevée est refusée (code 181)
help-org-update--no_max_invoice_total = Retirer le plafond par facture : tout total est de nouveau accepté
help-org-list = Lister les organisations
help-org-list--json = Afficher du JSON (pour les scripts)
help-org-show = Montrer une organisation et l'usage de son quota cette année
help-org-show--id = Id de l'organisation
help-org-show--json = Afficher du JSON (pour les scripts)

help-key = Clés API
help-key-issue = Émettre une clé ; elle n'est affichée qu'une fois et n'est jamais gardée en clair
help-key-issue--org = Id de l'organisation
help-key-issue--sandbox = Une clé de bac à sable (mcf_test_) au lieu d'une clé de production (mcf_live_)
help-key-issue--label = Texte libre pour distinguer les clés
help-key-list = Lister les clés d'une organisation
help-key-list--org = Id de l'organisation
help-key-list--json = Afficher du JSON (pour les scripts)
help-key-disable = Désactiver une clé : la prochaine requête avec elle reçoit 401
help-key-disable--id = Id de la clé (comme listé)
help-key-enable = Réactiver une clé
help-key-enable--id = Id de la clé (comme listé)

help-log = Le registre LogInvoices
help-log-list = Lister les entrées du registre
help-log-list--org = Seulement celles de cette organisation
help-log-list--sandbox = Le registre du bac à sable
help-log-list--after = Les entrées après ce numéro
help-log-list--limit = Au plus ce nombre
help-log-list--json = Afficher du JSON (pour les scripts)
help-log-show = Montrer une entrée comme la lit un contrôleur : la facture qu'elle a certifiée (client, articles, paiements, référence), ses montants par groupe de taxation, ses éléments de sécurité, et les avoirs qui la réduisent ou la facture qu'elle réduit ; par numéro, ou par --org et --rn
help-log-show--sequence = Numéro de l'entrée (sinon --org et --rn)
help-log-show--org = L'organisation (avec --rn)
help-log-show--rn = Le numéro de facture (avec --org)
help-log-show--sandbox = Le registre du bac à sable
help-log-show--json = Afficher du JSON (pour les scripts) : l'entrée telle que journalisée, avec certified_invoice, groups, original et credit_notes
help-log-export = Exporter le registre sur la sortie standard
help-log-export--format = csv (valeurs séparées, avec une ligne d'en-tête) ou json (un objet JSON par ligne)
help-log-export--separator = Séparateur des cellules du CSV : comma (programmes : points décimaux) ou semicolon (un tableur français : virgules décimales dans les montants aussi)
help-log-export--bom = Commencer le CSV par une marque d'ordre des octets UTF-8 (Excel lit alors bien les accents)
help-log-export--org = Seulement celles de cette organisation
help-log-export--sandbox = Le registre du bac à sable
help-log-export--from = Seulement les entrées certifiées ce jour-là ou après (AAAA-MM-JJ, dans le fuseau configuré)
help-log-export--to = Seulement les entrées certifiées ce jour-là ou avant (AAAA-MM-JJ, dans le fuseau configuré)
help-log-verify = Vérifier le CRC de chaque enregistrement et la chaîne d'empreintes du journal

help-index = L'index sled (une projection du journal)
help-index-rebuild = Accepter le journal tel qu'il est et en reconstruire l'index, quand l'index est en avance sur le journal ou en désaccord avec lui ; l'ancien index est gardé à part (index.sled.stale-<heure>). Seulement après avoir comparé le journal à une sauvegarde : les entrées qui y manquent restent perdues. Un index d'accord avec le journal est laissé tel quel (et c'est dit), sauf avec --force
help-index-rebuild--force = Reconstruire même un index d'accord avec le journal (l'ancien est gardé à part)
help-store = Déplacer un registre entre le registre intégré et PostgreSQL
help-store-migrate = Créer ou mettre à jour le schéma de la base PostgreSQL de [store], en propriétaire de la base (le rôle du service démarre ensuite sans le changer)
help-store-import = Copier le registre intégré d'un dossier d'état (service arrêté) dans la base PostgreSQL vide de [store], puis vérifier que les deux donnent les mêmes réponses ; code de sortie 1 au moindre écart
help-store-import--from_state_dir = Le dossier d'état qui contient le registre (journal/journal.log)
help-store-export = Écrire le registre de la base PostgreSQL de [store] dans un nouveau registre intégré, dans un dossier vide ou absent, puis le vérifier et comparer les deux ; code de sortie 1 au moindre écart
help-store-export--to_state_dir = Le nouveau dossier d'état

help-dashboard-token = Jetons de connexion au tableau de bord des administrateurs d'organisation
help-dashboard-token-issue = Émettre un jeton pour l'administrateur d'une organisation ; il n'est affiché qu'une fois et n'est jamais gardé en clair
help-dashboard-token-issue--org = Id de l'organisation
help-dashboard-token-issue--label = Texte libre : à qui est ce jeton
help-dashboard-token-list = Lister les jetons du tableau de bord d'une organisation
help-dashboard-token-list--org = Id de l'organisation
help-dashboard-token-list--json = Afficher du JSON (pour les scripts)
help-dashboard-token-revoke = Révoquer un jeton : il ne connecte plus et ses sessions ouvertes se terminent
help-dashboard-token-revoke--id = Id du jeton (comme listé)

help-device = Boîtiers fiscaux : en sonder un (techniciens), et les anomalies fiscales de leurs compteurs ; e-MCF de l'API web gardés dans le registre PostgreSQL (add, update, remove, list)
help-device-probe = Lire tout ce qu'un boîtier dit de lui-même (identité, NIF, taux, compteurs, dernière facture, liaison avec la DGI, champs du contribuable) et ce qui s'écarte de PROTOCOL.md, en mots simples ; lecture seule ; à travers le service en marche, ou sur le port quand le service est arrêté
help-device-probe--device = L'appareil configuré (par défaut : le seul)
help-device-probe--capture = Écrire aussi chaque octet échangé dans ce fichier (capture de ligne ; service arrêté seulement)
help-device-probe--json = Afficher le rapport en JSON (ses mots en anglais, pour les scripts)
help-device-anomalies = Anomalies fiscales : un boîtier dont le compteur a reculé ou dont le NIF a changé, ou un registre en retard sur son boîtier
help-device-anomalies-list = Les lister (prises en compte ou non)
help-device-anomalies-list--json = Afficher du JSON (pour les scripts)
help-device-anomalies-ack = En prendre une en compte : inscrit au journal avec qui et pourquoi ; elle quitte le tableau de bord et /metrics
help-device-anomalies-ack--id = Son id (comme listé)
help-device-anomalies-ack--by = Qui la prend en compte
help-device-anomalies-ack--note = Pourquoi elle est comprise (par exemple « mémoire remplacée par la DGI, rapport 2026-114 »)

help-intent = Factures en doute : listées, et réglées par un administrateur quand le canal ne peut pas trancher (une confirmation à l'API web dont la réponse s'est perdue) ; à travers le service en marche
help-intent-list = Les intentions ouvertes : celles en cours de règlement avec leur canal, et celles qui attendent un administrateur, avec pourquoi
help-intent-list--json = Afficher du JSON (pour les scripts)
help-intent-resolve = Régler une intention qui attend un administrateur, d'après ce que montre le portail de la DGI : --certified avec ses éléments de sécurité, ou --not-certified ; inscrit au journal avec qui
help-intent-resolve--intent = L'id de l'intention (comme listé)
help-intent-resolve--certified = Le portail de la DGI la montre certifiée : donnez ses éléments ci-dessous
help-intent-resolve--not_certified = Le portail de la DGI ne la montre pas : le rn pourra être certifié de nouveau
help-intent-resolve--code_def = codeDEFDGI, tel que le portail le montre
help-intent-resolve--qr_code = Le texte du code QR
help-intent-resolve--counters = Compteurs, par exemple « 5/8 FV »
help-intent-resolve--nim = Le NIM de l'e-MCF
help-intent-resolve--date_time = Date et heure de la certification, AAAA-MM-JJTHH:MM:SS (par exemple 2026-11-23T10:00:00)
help-intent-resolve--by = Qui la règle (inscrit au journal)
help-intent-resolve--note = Où cela a été lu, pourquoi (inscrit au journal)

## config check
help-config = La configuration telle que serve la lit, et ce qu'elle nomme
help-config-check = Vérifier la configuration comme serve la lirait, puis le répertoire d'état, chaque appareil (en lecture seule), les fichiers des jetons et des mots de passe et, avec --smtp, le relais : une ligne par vérification, chaque problème avec sa correction ; code de sortie 1 s'il y a une erreur
help-config-check--smtp = Se connecter aussi au relais [smtp] et s'y identifier (aucun message n'est envoyé)
help-config-check--json = Afficher les vérifications en JSON

## notice
help-value-date = DATE
help-value-text = TEXTE
help-value-version = VERSION
help-notice = Avis de changement à toutes les organisations : envoyés par e-mail, affichés sur les tableaux de bord, et dans les en-têtes d'une version de l'API qu'ils retirent
help-notice-add = Publier un avis de changement : au moins 30 jours à l'avance, envoyé une fois par e-mail aux administrateurs de chaque organisation, un bandeau sur leurs tableaux de bord jusqu'à la date
help-notice-add--effective = Le jour où le changement prend effet, AAAA-MM-JJ (son début, à l'heure de la passerelle, au moins 30 jours pleins après maintenant)
help-notice-add--subject = L'objet de l'avis, sur une ligne
help-notice-add--body_file = Un fichier texte UTF-8 qui contient le texte de l'avis, tel qu'il doit être lu
help-notice-add--retires = La version de l'API que le changement retire (v1) : ses réponses portent alors les en-têtes Deprecation, Sunset et Link
help-notice-list = Les avis de changement et leurs e-mails, envoyés ou en attente, par organisation
help-notice-list--json = Afficher du JSON (pour les scripts)

## backup
help-backup = Écrire une copie vérifiée du registre, de l'état et de la configuration (service en marche ou arrêté), garder les [backup] keep dernières, puis lancer [backup] command
help-backup--dest = Où va la copie (par défaut : [backup] dir)
help-restore = Remettre une copie dans le répertoire d'état, service arrêté ; refusé sur un registre que la copie ne contient pas entièrement, sauf avec --force
help-restore--src = Le dossier de la copie (emcf-backup-<heure>)
help-restore--force = Restaurer sur un registre qui a des factures que la copie n'a pas (il est gardé à part)
help-value-dest = DESTINATION
help-value-src = COPIE

## backup (restore --config-in-place, backup verify)
help-restore--config_in_place = Remettre les fichiers de configuration aux chemins que nomme la configuration actuelle (son propre fichier et ceux qu'elle nomme) ; les autres restent à côté de l'état
help-backup-verify = Vérifier une copie d'après son manifeste, sans rien écrire (pour un auditeur) : longueur et SHA-256 de chaque fichier, journal relu jusqu'à sa tête et ses comptes ; code de sortie 1 au moindre écart
help-backup-verify--dir = Le dossier de la copie (emcf-backup-<heure>)

# A register behind its box (issue 27)
help-device-anomalies-ack--numbers = Un registre en retard sur son boîtier : les numéros des certifications manquantes, comme listés (par exemple « 7-9, 12 ») ; exigés pour cette sorte d'anomalie, refusés pour les autres
help-value-numbers = NUMÉROS
help-device-anomalies-ack--rn = Le rn d'une certification manquante, tel que le portail de la DGI le montre : NUMÉRO=RN (répétable). Ce rn n'est plus jamais certifié pour les organisations de l'appareil ; un numéro manquant dont le rn est inconnu serait certifié de nouveau si sa facture était renvoyée sous son ancien rn
help-device-add = Garder un e-MCF de l'API web dans le registre PostgreSQL, son jeton scellé : chaque réplique s'en sert d'ici quelques secondes, sans redémarrage
help-device-add--name = Le nom de l'appareil (le --device des organisations)
help-device-add--kind = Son type : web_api (un boîtier reste dans les [[devices]] du fichier de sa réplique)
help-device-add--url = La base de l'API, http(s)://hôte[:port][/préfixe]
help-device-add--token_file = Le fichier qui contient le jeton de l'e-MCF (lu une fois, puis gardé scellé)
help-device-update = Changer l'URL ou le jeton d'un appareil gardé dans le registre
help-device-update--name = Le nom de l'appareil
help-device-update--url = La nouvelle base de l'API
help-device-update--token_file = Le fichier qui contient le nouveau jeton
help-device-remove = Retirer un appareil gardé dans le registre (refusé tant qu'une organisation ou une intention ouverte s'en sert)
help-device-remove--name = Le nom de l'appareil
help-device-list = Lister les appareils gardés dans le registre (jamais leurs jetons)
help-device-list--json = Afficher du JSON (pour les scripts)
help-store-rotate-key = Resceller chaque jeton d'appareil gardé dans le registre avec la première clé de [store] secret_key_file, en une transaction
help-value-kind = TYPE
help-value-url = URL
help-value-number-rn = NUMÉRO=RN
