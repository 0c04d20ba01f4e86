# The printable fiscal block (src/receipt/, API receipt.html and receipt.escpos, dashboard).
# On ESC/POS receipts these texts are printed as ASCII: accents are dropped there.

receipt-title = { $document } – e-MCF security elements
receipt-page-title = Fiscal block of invoice { $rn }
receipt-qr-label = Certification QR code of invoice { $rn }
receipt-rn = Invoice no.
receipt-type = Type
receipt-original-code = Original invoice's DEF/DGI code
receipt-original-rn = Original invoice no.
receipt-original-not-found = not found in this register
receipt-seller-nif = Seller NIF
receipt-seller-isf = Seller ISF
receipt-date-time = e-MCF date and time
receipt-code = DEF/DGI code
receipt-counters = Counters
receipt-nim = NIM (machine no.)
receipt-total = Total incl. VAT
receipt-vat = Total VAT
receipt-group-ttc = Group { $group } incl. VAT
receipt-group-vat = Group { $group } VAT
receipt-specific-tax = Specific tax
receipt-usd = USD equivalent
receipt-rate = { $currency } rate of { $date }
receipt-back = ← Back to the invoice
receipt-print-hint = Print this page (Ctrl+P); choose the layout:
receipt-layout-a4 = bottom of an A4 page
receipt-layout-80mm = 80 mm receipt
receipt-layout-58mm = 58 mm receipt
receipt-bad-layout = unknown layout "{ $value }": choose a4, 80mm or 58mm

## Refused parameters (HTTP 400, code 128; src/api/reply.rs)
err-bad-parameter = the parameter "{ $name }" cannot be "{ $value }"; allowed values: { $allowed }
