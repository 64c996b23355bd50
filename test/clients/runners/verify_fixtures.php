<?php
// Runs clients/php over the fixture cases written by test/clients: argv = cases.json, clients/php.
declare(strict_types=1);

require $argv[2] . '/GatewayCallback.php';

use Gateway\Callback\GatewayCallback;

$out = [];
foreach (json_decode((string) file_get_contents($argv[1]), true) as $case) {
    $body = base64_decode($case['body_b64'], true);
    ['address_in' => $addressIn, 'coin' => $coin] = $case['expected'];
    $key = $case['key_file'] !== null ? (string) file_get_contents($case['key_file']) : null;
    if ($case['gateway'] !== null) {
        $r = (new GatewayCallback($case['gateway'], $key))->verifyPayment($case['method'], $case['target'], $case['headers'], $body, $addressIn, $coin, $case['now']);
    } else {
        $r = GatewayCallback::verifyPaymentWithKey($case['method'], $case['target'], $case['headers'], $body, (string) $key, $addressIn, $coin, $case['now']);
    }
    $out[] = ['name' => $case['name'], 'ok' => $r->ok, 'reason' => $r->reason];
}
echo json_encode($out), "\n";
