<?php
// Certify one invoice with emcf-gateway, the way an ERP should (PHP >= 7.4 with the curl
// extension: Debian's php-cli and php-curl).
//
//   EMCF_URL=http://127.0.0.1:8080 EMCF_KEY=mcf_live_... php emcf_client.php [RN]
//
// EMCF_LANG: the language of the person who reads the ERP's messages, fr (the default) or en;
// errorDesc and warningDesc come in it (Accept-Language). Send your user's language, not "en".
//
// 1. POST /api/v1/Invoice with the invoice (rn from the command line, else a new unique one).
// 2. Retry the SAME body (same rn) only when the answer says so: 503 or 409 with Retry-After,
//    waiting Retry-After (longer if it repeats). No answer at all (gateway down, connection
//    cut, timeout): back off exponentially, but first ask GET /api/v1/Invoice/{rn} whether the
//    lost request was certified (200: it was; 404: it was not, send it again). Any other
//    answer is final (README, "Worth a retry?"). A 200 whose body cannot be read is a lost
//    answer too.
// 3. Print the security elements and the OK line (the result: store it), then save the QR
//    code (GET /api/v1/Invoice/{rn}/qr.svg). The gateway also serves the whole fiscal block
//    ready to print: receipt.html (A4 or 80 mm) and receipt.escpos (thermal printers), under
//    the same /api/v1/Invoice/{rn}/.
//
// Last line: OK rn=... codeDEFDGI=... counters="..." nim=... qrSvg=... (qrSvg: where the QR
// code is saved right after that line).
// Exit status: 0 certified, 1 refused (FAIL line), 2 usage, 3 gave up (run again, same rn),
// 4 certified but the QR code not saved (the OK line stands: do NOT certify again; fetch
// qr.svg later).

const MAX_WAIT = 60; // seconds, never longer between two tries

$url = rtrim(getenv('EMCF_URL') ?: 'http://127.0.0.1:8080', '/');
$key = getenv('EMCF_KEY') ?: '';
$timeout = (float) (getenv('EMCF_TIMEOUT') ?: 60); // seconds for one HTTP exchange
$maxTries = (int) (getenv('EMCF_MAX_TRIES') ?: 8);
$outDir = getenv('EMCF_OUT') ?: '.';
// The language the ERP's user reads: errorDesc and warningDesc come in it. French by default.
$lang = trim((string) getenv('EMCF_LANG')) ?: 'fr';

class NoAnswer extends Exception {} // refused, cut or timed out: no HTTP answer
class Refused extends Exception {}  // a final answer: retrying cannot help
class GaveUp extends Exception {}

/** Two pens at 600.00 CDF, tax group B, prices including tax, paid in cash. Amounts are always
 *  in CDF, also for a USD invoice (curCode USD, curRate = CDF per USD): convert USD prices. */
function invoice(string $rn): array
{
    return [
        'rn' => $rn,
        'mode' => 'ttc',
        'type' => 'FV',
        'curCode' => 'CDF',
        'curRate' => '-1',
        'items' => [[
            'code' => 'LR 1515', 'name' => 'STYLO BIC', 'type' => 'BIE',
            'price' => '600.00', 'quantity' => '2', 'taxGroup' => 'B',
        ]],
        'client' => [
            'nif' => 'A7654321C', 'type' => 'PM', 'name' => 'CLIENT SARL',
            'contact' => '+243 810 000 001', 'address' => 'Gombe, Kinshasa',
        ],
        'payments' => [['name' => 'ESPECES', 'amount' => '1200.00', 'curCode' => 'CDF', 'curRate' => '-1']],
        'operator' => ['id' => '1', 'name' => 'Caisse 1'],
    ];
}

/** One HTTP exchange: [status, headers (lower-case names), body]. Throws NoAnswer. */
function call(string $method, string $path, ?array $body = null): array
{
    global $url, $key, $timeout, $lang;
    $headers = [];
    $curl = curl_init($url . $path);
    $send = ['Authorization: Bearer ' . $key, 'Accept-Language: ' . $lang];
    if ($body !== null) {
        $send[] = 'Content-Type: application/json';
        curl_setopt($curl, CURLOPT_POSTFIELDS, json_encode($body, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES));
    }
    curl_setopt_array($curl, [
        CURLOPT_CUSTOMREQUEST => $method,
        CURLOPT_HTTPHEADER => $send,
        CURLOPT_RETURNTRANSFER => true,
        CURLOPT_CONNECTTIMEOUT_MS => 10000,
        CURLOPT_TIMEOUT_MS => (int) ($timeout * 1000),
        CURLOPT_HEADERFUNCTION => function ($curl, $line) use (&$headers) {
            $parts = explode(':', $line, 2);
            if (count($parts) === 2) {
                $headers[strtolower(trim($parts[0]))] = trim($parts[1]);
            }
            return strlen($line);
        },
    ]);
    $raw = curl_exec($curl);
    if ($raw === false) {
        $error = curl_error($curl);
        curl_close($curl);
        throw new NoAnswer($error);
    }
    $status = curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
    curl_close($curl);
    return [$status, $headers, $raw];
}

/** 1, 2, 4, 8... seconds, capped, with jitter so that tills do not retry together. */
function backoff(int $tries): float
{
    return min(MAX_WAIT, 2 ** ($tries - 1)) * (0.8 + mt_rand(0, 400) / 1000);
}

function logline(string $text): void
{
    fwrite(STDERR, $text . "\n");
}

function pause(float $seconds, string $why): void
{
    $seconds = min($seconds, MAX_WAIT);
    logline(sprintf('%s; retrying the same request in %.1f s', $why, $seconds));
    usleep((int) ($seconds * 1e6));
}

function certify(array $body): array
{
    global $maxTries;
    $path = '/api/v1/Invoice/' . rawurlencode($body['rn']);
    $lost = null; // why the last answer was lost: look the rn up before sending it again
    for ($tries = 1; $tries <= $maxTries; $tries++) {
        if ($lost === null) {
            try {
                [$status, $headers, $raw] = call('POST', '/api/v1/Invoice', $body);
            } catch (NoAnswer $error) {
                $lost = $error->getMessage();
            }
        }
        if ($lost !== null) {
            // Sent or not? Ask by rn before sending it again (the gateway never certifies an
            // rn twice either way).
            logline("no answer ($lost); asking GET $path (try $tries/$maxTries)");
            $lost = null;
            try {
                [$status, $headers, $raw] = call('GET', $path);
            } catch (NoAnswer $again) {
                pause(backoff($tries), 'the gateway does not answer');
                continue;
            }
            if ($status === 404) {
                logline('not certified: sending it again');
                continue;
            }
        }
        $answer = json_decode($raw, true);
        $answer = is_array($answer) ? $answer : [];
        if ($status === 200) {
            if (is_string($answer['codeDEFDGI'] ?? null) && $answer['codeDEFDGI'] !== '') {
                return $answer;
            }
            $lost = 'a 200 whose body cannot be read'; // certified, surely: ask for the result
            continue;
        }
        $retryAfter = isset($headers['retry-after']) && is_numeric($headers['retry-after'])
            ? max(0.0, (float) $headers['retry-after']) : null;
        if (($status === 503 || $status === 409) && $retryAfter !== null) {
            // Worth a retry: the same request, after Retry-After (longer if it repeats).
            $why = "$status errorCode " . ($answer['errorCode'] ?? '?') . ': ' . ($answer['errorDesc'] ?? '');
            pause(max($retryAfter, $tries > 1 ? backoff($tries) : 0), $why);
            continue;
        }
        throw new Refused("status=$status errorCode=" . ($answer['errorCode'] ?? '?')
            . ' errorDesc=' . json_encode($answer['errorDesc'] ?? substr($raw, 0, 200),
                JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE));
    }
    throw new GaveUp("no result after $maxTries tries: run again later with rn {$body['rn']}");
}

/** The QR code to print, as SVG (receipt.html / receipt.escpos give the whole block). */
function saveQr(string $rn, string $path): void
{
    [$status, , $svg] = call('GET', '/api/v1/Invoice/' . rawurlencode($rn) . '/qr.svg');
    if ($status !== 200) {
        throw new Refused("qr.svg: status=$status");
    }
    if (@file_put_contents($path, $svg) === false) { // @: the warning would go to stdout
        throw new RuntimeException('cannot write ' . $path);
    }
}

if ($key === '') {
    logline('set EMCF_KEY (and EMCF_URL): EMCF_KEY=mcf_live_... php emcf_client.php [RN]');
    exit(2);
}
$rn = $argv[1] ?? sprintf('PHP-%d-%06d', time(), mt_rand(0, 999999));
try {
    $result = certify(invoice($rn));
} catch (Refused $refused) {
    echo "FAIL rn=$rn {$refused->getMessage()}\n";
    exit(1);
} catch (GaveUp | NoAnswer $gaveUp) {
    echo "FAIL rn=$rn {$gaveUp->getMessage()}\n";
    exit(3);
}
// Store these with the invoice and print them on it.
foreach (['codeDEFDGI', 'counters', 'nim', 'qrCode', 'dateTime', 'total', 'vtotal'] as $name) {
    echo "$name: {$result[$name]}\n";
}
foreach ($result['warnings'] ?? [] as $warning) {
    // Certified all the same, but show it to a person (e.g. 301: USD amounts sent as CDF).
    echo "WARNING {$warning['warningCode']}: {$warning['warningDesc']}\n";
}
$qrPath = $outDir . '/' . preg_replace('/[^A-Za-z0-9_-]/', '_', $rn) . '-qr.svg';
echo "OK rn=$rn codeDEFDGI={$result['codeDEFDGI']} counters=\"{$result['counters']}\" nim={$result['nim']} qrSvg=$qrPath\n";
// The invoice is certified whatever happens now: a QR code not saved is no refusal (never
// certify it again under another rn); the same GET gives it later.
try {
    saveQr($rn, $qrPath);
} catch (Refused | NoAnswer | RuntimeException $error) {
    logline("WARNING rn=$rn certified, QR code not saved ({$error->getMessage()}): fetch GET /api/v1/Invoice/$rn/qr.svg later");
    exit(4);
}
exit(0);
