<?php
// The plain-PHP snippet of clients/php/README.md as a receiver for `php -S`: GATEWAY_URL and KEY_FILE from the environment.
declare(strict_types=1);

require getenv('CLIENT_DIR') . '/GatewayCallback.php';

use Gateway\Callback\GatewayCallback;

$keyFile = (string) getenv('KEY_FILE');
$cached = is_file($keyFile) ? (string) file_get_contents($keyFile) : null;
$verifier = new GatewayCallback((string) getenv('GATEWAY_URL'), $cached);

$raw = (string) file_get_contents('php://input');
$result = $verifier->verifyGlobals($raw);
if (!$result->ok) {
    http_response_code(401);
    exit($result->reason);
}
if ($verifier->publicKeyPem() !== $cached) {
    file_put_contents($keyFile, $verifier->publicKeyPem());
}

if ($_SERVER['REQUEST_METHOD'] === 'GET') {
    parse_str((string) parse_url($_SERVER['REQUEST_URI'], PHP_URL_QUERY), $fields);
} elseif (strpos($_SERVER['CONTENT_TYPE'] ?? '', 'application/json') === 0) {
    $fields = json_decode($raw, true);
} else {
    parse_str($raw, $fields);
}
parse_str((string) parse_url($_SERVER['REQUEST_URI'], PHP_URL_QUERY), $query);
http_response_code(200);
echo implode(' ', ['ok', $fields['uuid'], $fields['result'], (string) $fields['pending'], $fields['coin'], $query['order'] ?? '-']);
