# Words shared by several areas (API, dashboard, CLI).
# The same ids, with the same variables, in locales/fr and locales/en.

yes = yes
no = no
environment-production = production
environment-sandbox = sandbox

# Used by the catalogue's own tests (src/i18n/catalogue.rs).
test-greeting = Hello, { $name }
test-count = { $n ->
    [one] { $n } invoice
   *[other] { $n } invoices
}

## the QR code of a certification (receipts, dashboard)
qr-not-drawn = The QR code could not be drawn from the qrCode text; the text is given below.

## Documents, named by their type (the seed's type table): receipts, dashboard, CLI
invoice-type-fv = Sales invoice
invoice-type-ft = Down payment invoice
invoice-type-fa = Credit note
invoice-type-ev = Export sales invoice
invoice-type-et = Export down payment invoice
invoice-type-ea = Export credit note
invoice-type-other = Invoice { $code }

## The currency of an invoice or a payment: amounts are always in CDF
invoice-currency-converted = { $currency } (amounts in CDF; { $rate }, rate of { $date })
payment-paid-in-worth = paid in { $currency }: { $worth }
payment-paid-in = paid in { $currency }
