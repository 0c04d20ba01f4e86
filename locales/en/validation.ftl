# validation
# The invoice body's rules (HTTP 400, codes 1..99): errorDesc of src/certify/invoice.
# The same ids, with the same variables, in locales/fr and locales/en (src/i18n/catalogue.rs tests).
# Values sent by the client are given quoted as sent ($value, $rn...); field names (rn,
# items[2].price) and codes are never translated.

## Reading the body (1..7)

# What is wrong in unreadable JSON ($fault: src/certify/invoice/json.rs, json_fault), used by the two messages after it.
json-fault = { $fault ->
    [eof-value] the body ends where a value is expected (an empty or cut body)
    [eof-list] the body ends before the end of an array (a "]" is missing)
    [eof-object] the body ends before the end of an object (a "{"}"}" is missing)
    [eof-string] the body ends inside a string (the closing double quote is missing)
    [expected-colon] a ":" is expected after the field's name
    [expected-comma-list] a "," or a "]" is expected in an array
    [expected-comma-object] a "," or a "{"}"}" is expected in an object
    [expected-value] a value is expected (a string in double quotes, a number, an object, an array, true, false or null), or there is a "," too many before a "]"
    [key-not-string] a field name in double quotes is expected (or there is a "," too many before the "{"}"}")
    [invalid-escape] an unknown "\" escape in a string
    [invalid-number] a badly written number
    [number-out-of-range] a number too large
    [invalid-unicode] a "\u" escape that is not a character
    [control-in-string] a control character (line break, tab...) written as it is in a string instead of escaped
    [trailing-comma] a "," too many before the end of an array or an object
    [trailing-characters] characters after the end of the JSON value
    [too-deep] arrays and objects nested too deep
   *[other] this is not JSON
}
err-body-not-utf8 = the body is not UTF-8 (byte { $byte })
err-body-not-json = the body is not valid JSON, line { $line }, column { $column }: { json-fault }
err-json-syntax-at = { $field } is not valid JSON: { json-fault }
err-body-too-deep = the body nests arrays and objects deeper than { $max } levels (byte { $byte })
err-body-not-object = the body must be an object, not { $actual ->
    [array] an array
    [string] a string
    [boolean] a boolean
    [null] null
   *[number] a number
}
err-wrong-type = { $field } must be { $expected ->
    [object] an object
    [array] an array
    [string] a string
   *[decimal] a decimal (string or number)
}, not { $actual ->
    [object] an object
    [array] an array
    [string] a string
    [boolean] a boolean
    [null] null
   *[number] a number
}
err-lone-surrogate = { $field } must be text: it holds a \u escape of half a UTF-16 surrogate pair without its other half, which is not a character
err-unknown-field = unknown field { $field } (the fields here are: { $known })
err-duplicate-field = field { $field } is given more than once
err-bad-decimal = { $field } must be a plain decimal such as "1200.50": { $value } { $reason ->
    [exponent] has an exponent
    [digits] has too many digits
   *[other] is not a decimal number
}
err-field-required = { $field } is required

## Invoice header (10..31)

err-rn-empty = the invoice number (rn) cannot be empty
err-rn-too-long = rn { $rn } is not a valid invoice number: at most { $max } characters
err-rn-character = rn { $rn } is not a valid invoice number: the character { $char } is not allowed (printable ASCII only, none of , & < > ^)
err-rn-dots = rn { $rn } is not a valid invoice number: it must not be only dots
err-rn-invalid = rn { $rn } is not an invoice number the device accepts: 1 to { $max } printable ASCII characters, none of , & < > ^
err-type-invalid = type { $value } is not one of FV, FT, FA, EV, ET, EA
err-mode-invalid = mode { $value } is not ht or ttc
err-nif-mismatch = nif { $value } is not the NIF of this API key's organization; leave it out to use the key's
err-isf-mismatch = isF { $value } is not the ISF of this API key's organization; leave it out to use the key's
err-cur-date-invalid = curDate { $value } is not an ISO 8601 date (2026-02-28) or date-time (2026-02-28T17:05:06Z)
err-cdf-rate = a CDF invoice has curRate -1 (or none), not { $rate }
err-usd-rate = a USD invoice needs curRate, the CDF per USD rate: > 0, at most 4 decimals
err-usd-date-missing = a USD invoice needs curDate, the ISO 8601 date of its rate
err-currency-invalid = { $field } { $value } is not CDF or USD
err-reference-not-allowed = { $field } { $value } is only for credit notes (FA, EA), not { $invoice_type }
err-reference-missing = a { $invoice_type } needs reference, the codeDEFDGI of the original invoice
err-reference-invalid = reference { $value } is not a codeDEFDGI: { $length } printable ASCII characters, capital letters, no space and none of , & < > ^
err-reference-type-invalid = referenceType { $value } is not one of COR, RAN, RAM, RRR
err-operator-name-empty = operator.name cannot be empty
err-too-large-to-keep = the validated invoice is { $length } bytes long in its canonical form; the register keeps at most { $max }: split it into several invoices
err-type-desc-too-long = client.typeDesc is { $length } bytes long, at most { $max } are accepted

## Items (40..53)

err-no-items = items must hold at least one line
err-item-name-empty = { $field } cannot be empty
err-item-type-invalid = { $field } { $value } is not one of BIE, SER, TAX
err-tax-group-invalid = { $field } { $value } is not a letter A to P
err-amount-negative = { $field } must not be negative, got { $value }
err-too-precise = { $field } has at most { $places } decimals, got { $value }
err-must-be-positive = { $field } must be more than 0, got { $value }
err-out-of-range = { $field } is out of range: { $value } is more than { $max }
err-line-out-of-range = { $field }: price x quantity ({ $price } x { $quantity }) is more than { $max }
err-specific-value-invalid = { $field } { $value } is not a percentage such as "5.00%" (>= 0, at most 2 decimals)
err-specific-amount-missing = { $value_field } is { $rate }% but { $field } is missing
err-specific-amount-wrong = { $field } { $amount } is not { $rate }% of the line amount { $line_amount } ({ $expected })
err-price-change-without-original = { $text_field } is given but { $field } is missing
err-price-change-unexplained = { $original_field } { $original } differs from the price { $price }: say why in { $field }

## Payments (60..64)

err-payments-sum-out-of-range = the payments add up to more than { $max }
err-payment-method-invalid = { $field } { $value } is not one of ESPECES, VIREMENT, CARTEBANCAIRE, MOBILEMONEY, CHEQUES, CREDIT, AUTRE
err-payment-rate-invalid = { $field } { $rate } does not fit the payment's currency: -1 for CDF, the CDF per USD rate (> 0, at most 4 decimals) for USD

## Texts: control characters and line layout marks (71, 73), in any text of the body

err-control-character = { $field } contains a control character, U+{ $char }{ $name ->
    [tab] {" "}(tab)
    [lf] {" "}(line feed)
    [cr] {" "}(carriage return)
    [esc] {" "}(escape)
   *[other] {""}
}, at character { $position }; an invoice text holds none (no tab, no line break: the comment lines cmta to cmth are there for texts on several lines)
err-layout-character = { $field } contains U+{ $char }, an invisible character that changes the writing direction or breaks the line (a bidirectional mark or a line separator), at character { $position }; an invoice text holds none: it would show something other than what is certified

## Device frames (70..72)

err-command-too-long = command { $command } would be { $length } bytes on the device, a frame carries at most { $max }; shorten (bytes on the wire): { $texts }
err-not-encodable = { $field }: the device protocol cannot carry this value in command { $command }
