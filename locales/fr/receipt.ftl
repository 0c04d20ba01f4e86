# Le bloc fiscal imprimable (src/receipt/, API receipt.html et receipt.escpos, tableau de bord).
# Sur les tickets ESC/POS ces textes sont imprimés en ASCII : les accents y sont retirés.

receipt-title = { $document } – éléments de sécurité e-MCF
receipt-page-title = Bloc fiscal de la facture { $rn }
receipt-qr-label = Code QR de certification de la facture { $rn }
receipt-rn = Facture n°
receipt-type = Type
receipt-original-code = Code DEF/DGI de la facture d'origine
receipt-original-rn = N° de la facture d'origine
receipt-original-not-found = absente de ce registre
receipt-seller-nif = NIF du vendeur
receipt-seller-isf = ISF du vendeur
receipt-date-time = Date et heure e-MCF
receipt-code = Code DEF/DGI
receipt-counters = Compteurs
receipt-nim = NIM (n° de machine)
receipt-total = Total TTC
receipt-vat = Total TVA
receipt-group-ttc = Groupe { $group } TTC
receipt-group-vat = Groupe { $group } TVA
receipt-specific-tax = Taxe spécifique
receipt-usd = Équivalent USD
receipt-rate = Cours { $currency } du { $date }
receipt-back = ← Retour à la facture
receipt-print-hint = Imprimez cette page (Ctrl+P) ; choisissez la mise en page :
receipt-layout-a4 = bas de page A4
receipt-layout-80mm = ticket 80 mm
receipt-layout-58mm = ticket 58 mm
receipt-bad-layout = mise en page « { $value } » inconnue : choisissez a4, 80mm ou 58mm

## Les paramètres refusés (HTTP 400, code 128 ; src/api/reply.rs)
err-bad-parameter = le paramètre « { $name } » ne peut pas valoir « { $value } » ; valeurs permises : { $allowed }
