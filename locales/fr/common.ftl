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
qr-not-drawn = Le code QR n'a pas pu être dessiné à partir du texte qrCode ; le texte est donné ci-dessous.

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
