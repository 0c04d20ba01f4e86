# validation
# Les règles du corps de la facture (HTTP 400, codes 1 à 99) : errorDesc de src/certify/invoice.
# Les mêmes ids, avec les mêmes variables, dans locales/fr et locales/en (tests de src/i18n/catalogue.rs).
# Les valeurs envoyées par le client sont citées telles qu'envoyées ($value, $rn...) ; les noms de
# champs (rn, items[2].price) et les codes ne se traduisent pas.

## Lecture du corps (1 à 7)

# Ce qui ne va pas dans un JSON illisible ($fault : src/certify/invoice/json.rs, json_fault), repris par les deux messages qui suivent.
json-fault = { $fault ->
    [eof-value] le corps s'arrête là où une valeur est attendue (corps vide ou coupé)
    [eof-list] le corps s'arrête avant la fin d'un tableau (il manque un « ] »)
    [eof-object] le corps s'arrête avant la fin d'un objet (il manque un « {"}"} »)
    [eof-string] le corps s'arrête dans une chaîne (il manque le guillemet « " » qui la ferme)
    [expected-colon] un « : » est attendu après le nom du champ
    [expected-comma-list] une « , » ou un « ] » est attendu dans un tableau
    [expected-comma-object] une « , » ou une « {"}"} » est attendue dans un objet
    [expected-value] une valeur est attendue (une chaîne entre guillemets doubles, un nombre, un objet, un tableau, true, false ou null), ou une « , » est en trop avant un « ] »
    [key-not-string] un nom de champ entre guillemets doubles « " » est attendu (ou une « , » est en trop avant la « {"}"} »)
    [invalid-escape] un échappement « \ » inconnu dans une chaîne
    [invalid-number] un nombre mal écrit
    [number-out-of-range] un nombre trop grand
    [invalid-unicode] un échappement « \u » qui n'est pas un caractère
    [control-in-string] un caractère de contrôle (retour à la ligne, tabulation…) écrit tel quel dans une chaîne, au lieu d'être échappé
    [trailing-comma] une « , » en trop avant la fin d'un tableau ou d'un objet
    [trailing-characters] des caractères après la fin de la valeur JSON
    [too-deep] des tableaux et des objets imbriqués trop profondément
   *[other] ce n'est pas du JSON
}
err-body-not-utf8 = le corps de la requête n'est pas en UTF-8 (octet { $byte })
err-body-not-json = le corps de la requête n'est pas du JSON valide, ligne { $line }, colonne { $column } : { json-fault }
err-json-syntax-at = { $field } n'est pas du JSON valide : { json-fault }
err-body-too-deep = le corps imbrique des tableaux et des objets sur plus de { $max } niveaux (octet { $byte })
err-body-not-object = le corps doit être un objet, pas { $actual ->
    [array] un tableau
    [string] une chaîne
    [boolean] un booléen
    [null] null
   *[number] un nombre
}
err-wrong-type = { $field } doit être { $expected ->
    [object] un objet
    [array] un tableau
    [string] une chaîne
   *[decimal] un décimal (chaîne ou nombre)
}, pas { $actual ->
    [object] un objet
    [array] un tableau
    [string] une chaîne
    [boolean] un booléen
    [null] null
   *[number] un nombre
}
err-lone-surrogate = { $field } doit être du texte : il contient un échappement \u d'une moitié de paire de substitution UTF-16 sans l'autre moitié, ce qui n'est pas un caractère
err-unknown-field = champ inconnu { $field } (les champs permis ici sont : { $known })
err-duplicate-field = le champ { $field } est donné plus d'une fois
err-bad-decimal = { $field } doit être un nombre décimal simple, par exemple "1200.50" : { $value } { $reason ->
    [exponent] contient un exposant
    [digits] a trop de chiffres
   *[other] n'est pas un nombre décimal
}
err-field-required = { $field } est obligatoire

## En-tête de la facture (10 à 31)

err-rn-empty = le numéro de facture (rn) ne peut pas être vide
err-rn-too-long = rn { $rn } n'est pas un numéro de facture valide : { $max } caractères au plus
err-rn-character = rn { $rn } n'est pas un numéro de facture valide : le caractère { $char } n'est pas permis (ASCII imprimable uniquement, sans , & < > ^)
err-rn-dots = rn { $rn } n'est pas un numéro de facture valide : il ne peut pas être fait uniquement de points
err-rn-invalid = rn { $rn } n'est pas un numéro de facture que le boîtier accepte : de 1 à { $max } caractères ASCII imprimables, sans , & < > ^
err-type-invalid = type { $value } n'est pas l'un de FV, FT, FA, EV, ET, EA
err-mode-invalid = mode { $value } n'est ni ht ni ttc
err-nif-mismatch = nif { $value } n'est pas le NIF de l'organisation de cette clé API ; omettez-le pour utiliser celui de la clé
err-isf-mismatch = isF { $value } n'est pas l'ISF de l'organisation de cette clé API ; omettez-le pour utiliser celui de la clé
err-cur-date-invalid = curDate { $value } n'est pas une date ISO 8601 (2026-02-28) ni une date et heure (2026-02-28T17:05:06Z)
err-cdf-rate = une facture en CDF a un curRate de -1 (ou aucun), pas { $rate }
err-usd-rate = une facture en USD exige curRate, le taux en CDF pour 1 USD : supérieur à 0, 4 décimales au plus
err-usd-date-missing = une facture en USD exige curDate, la date ISO 8601 de son taux
err-currency-invalid = { $field } { $value } n'est ni CDF ni USD
err-reference-not-allowed = { $field } { $value } est réservé aux factures d'avoir (FA, EA), pas aux factures { $invoice_type }
err-reference-missing = une facture { $invoice_type } exige reference, le codeDEFDGI de la facture d'origine
err-reference-invalid = reference { $value } n'est pas un codeDEFDGI : { $length } caractères ASCII imprimables, lettres en majuscules, sans espace et sans , & < > ^
err-reference-type-invalid = referenceType { $value } n'est pas l'un de COR, RAN, RAM, RRR
err-operator-name-empty = operator.name ne peut pas être vide
err-too-large-to-keep = la facture validée fait { $length } octets sous sa forme canonique ; le registre en garde { $max } au plus : scindez-la en plusieurs factures
err-type-desc-too-long = client.typeDesc fait { $length } octets, { $max } au plus sont acceptés

## Articles (40 à 53)

err-no-items = items doit contenir au moins une ligne
err-item-name-empty = { $field } ne peut pas être vide
err-item-type-invalid = { $field } { $value } n'est pas l'un de BIE, SER, TAX
err-tax-group-invalid = { $field } { $value } n'est pas une lettre de A à P
err-amount-negative = { $field } ne peut pas être négatif, reçu { $value }
err-too-precise = { $field } a { $places } décimales au plus, reçu { $value }
err-must-be-positive = { $field } doit être supérieur à 0, reçu { $value }
err-out-of-range = { $field } est hors limites : { $value } dépasse { $max }
err-line-out-of-range = { $field } : prix x quantité ({ $price } x { $quantity }) dépasse { $max }
err-specific-value-invalid = { $field } { $value } n'est pas un pourcentage tel que "5.00%" (positif ou nul, 2 décimales au plus)
err-specific-amount-missing = { $value_field } vaut { $rate } % mais { $field } est absent
err-specific-amount-wrong = { $field } { $amount } ne fait pas { $rate } % du montant de la ligne { $line_amount } ({ $expected })
err-price-change-without-original = { $text_field } est donné mais { $field } est absent
err-price-change-unexplained = { $original_field } { $original } diffère du prix { $price } : indiquez-en la raison dans { $field }

## Paiements (60 à 64)

err-payments-sum-out-of-range = la somme des paiements dépasse { $max }
err-payment-method-invalid = { $field } { $value } n'est pas l'un de ESPECES, VIREMENT, CARTEBANCAIRE, MOBILEMONEY, CHEQUES, CREDIT, AUTRE
err-payment-rate-invalid = { $field } { $rate } ne convient pas à la devise du paiement : -1 pour le CDF, le taux en CDF pour 1 USD (supérieur à 0, 4 décimales au plus) pour l'USD

## Textes : caractères de contrôle et marques de mise en ligne (71, 73), pour tout texte du corps

err-control-character = { $field } contient un caractère de contrôle, U+{ $char }{ $name ->
    [tab] {" "}(tabulation)
    [lf] {" "}(saut de ligne)
    [cr] {" "}(retour chariot)
    [esc] {" "}(échappement)
   *[other] {""}
}, au caractère { $position } ; un texte de facture n'en contient aucun (ni tabulation ni retour à la ligne : les lignes de commentaire cmta à cmth servent aux textes sur plusieurs lignes)
err-layout-character = { $field } contient U+{ $char }, un caractère invisible qui change le sens d'écriture ou coupe la ligne (marque bidirectionnelle ou séparateur de ligne), au caractère { $position } ; un texte de facture n'en contient aucun : il afficherait autre chose que ce qui est certifié

## Trames du boîtier (70 à 72)

err-command-too-long = la commande { $command } ferait { $length } octets sur le boîtier, une trame en porte au plus { $max } ; raccourcissez (octets sur la ligne) : { $texts }
err-not-encodable = { $field } : le protocole du boîtier ne peut pas transmettre cette valeur dans la commande { $command }
