<?php
// The plain-PHP snippet of clients/php/README.md as a receiver for `php -S`: GATEWAY_URL, KEY_FILE and ORDERS
// (the shop's orders as JSON: reference => address_in and coin from their create responses) from the environment.
declare(strict_types=1);

require getenv('CLIENT_DIR') . '/GatewayCallback.php';

use Gateway\Callback\GatewayCallback;

$keyFile = (string) getenv('KEY_FILE');
$cached = is_file($keyFile) ? (string) file_get_contents($keyFile) : null;
$verifier = new GatewayCallback((string) getenv('GATEWAY_URL'), $cached);
$orders = json_decode((string) getenv('ORDERS'), true);

parse_str((string) parse_url($_SERVER['REQUEST_URI'], PHP_URL_QUERY), $query);
$order = $orders[$query['order'] ?? ''] ?? null;
if ($order === null) {
    http_response_code(404);
    exit('unknown order');
}
$result = $verifier->verifyPaymentGlobals($order['address_in'], $order['coin']);
if (!$result->ok) {
    http_response_code(401);
    exit($result->reason);
}
if ($verifier->publicKeyPem() !== $cached) {
    file_put_contents($keyFile, $verifier->publicKeyPem());
}
$fields = $result->fields;
http_response_code(200);
echo implode(' ', ['ok', $fields['uuid'], $fields['result'], (string) $fields['pending'], $fields['coin'], $query['order']]);
