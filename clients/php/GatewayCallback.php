<?php
/**
 * Verifies the gateway's signed merchant callbacks (SPEC 5). One file, PHP >= 7.4 with the openssl extension.
 *
 * Rules kept here: read the raw body before parsing; reject a missing header, a non-numeric timestamp or
 * abs(now - timestamp) > 300 s; rebuild the six canonical components from what arrived (never decoded,
 * sorted or re-encoded); verify RSA-SHA256 (PKCS#1 v1.5) with the key from GET /api/pubkey; on a signature
 * failure refetch the key once (it may have been rotated); never bypass. Trust the fields only after ok.
 *
 * A valid signature says the gateway sent the callback, not that it pays into your order: anyone can create
 * a configuration with your callback URL (or a spelling of it that arrives byte-identical) and their own
 * payout, and its callbacks are signed as well. verifyPayment therefore also takes what you stored for the
 * order when you created it (address_in, coin) and refuses a callback that carries anything else.
 */

declare(strict_types=1);

namespace Gateway\Callback;

final class VerifyResult
{
    /** @var bool */
    public $ok;
    /** @var string|null missing-header, bad-timestamp, stale-timestamp, bad-signature or key-unavailable */
    public $reason;
    /** @var int|null */
    public $timestamp;

    public function __construct(bool $ok, ?string $reason = null, ?int $timestamp = null)
    {
        $this->ok = $ok;
        $this->reason = $reason;
        $this->timestamp = $timestamp;
    }
}

final class PaymentResult
{
    /** @var bool */
    public $ok;
    /** @var string|null a VerifyResult reason, bad-fields, wrong-address-in or wrong-coin */
    public $reason;
    /** @var int|null */
    public $timestamp;
    /** @var array<string, mixed>|null the callback's fields, set only when ok */
    public $fields;

    public function __construct(bool $ok, ?string $reason = null, ?int $timestamp = null, ?array $fields = null)
    {
        $this->ok = $ok;
        $this->reason = $reason;
        $this->timestamp = $timestamp;
        $this->fields = $fields;
    }
}

final class GatewayCallback
{
    public const MAX_SKEW_SECONDS = 300;
    public const TIMESTAMP_HEADER = 'X-Gateway-Timestamp';
    public const SIGNATURE_HEADER = 'X-Gateway-Signature';

    /** @var string|null */
    private $gatewayUrl;
    /** @var string|null */
    private $publicKeyPem;
    /** @var callable|null */
    private $fetch;

    /**
     * @param string|null   $gatewayUrl   e.g. https://pay.example.com; the key comes from {gatewayUrl}/api/pubkey
     * @param string|null   $publicKeyPem a key already known (cached); refetched once when a signature fails
     * @param callable|null $fetch        returns the PEM; replaces the HTTP fetch (e.g. a Laravel cache lookup)
     */
    public function __construct(?string $gatewayUrl = null, ?string $publicKeyPem = null, ?callable $fetch = null)
    {
        if ($gatewayUrl === null && $publicKeyPem === null && $fetch === null) {
            throw new \InvalidArgumentException('give gatewayUrl, publicKeyPem or fetch');
        }
        $this->gatewayUrl = $gatewayUrl;
        $this->publicKeyPem = $publicKeyPem;
        $this->fetch = $fetch;
    }

    /** Host header value -> lowercase hostname without port; an IPv6 literal keeps its brackets. */
    public static function hostnameOf(string $hostHeader): string
    {
        $h = strtolower(trim($hostHeader));
        if ($h !== '' && $h[0] === '[') {
            return substr($h, 0, (int) strpos($h, ']') + 1);
        }
        $colon = strrpos($h, ':');
        return $colon === false ? $h : substr($h, 0, $colon);
    }

    /** v1, timestamp, METHOD, host, path_and_query, raw body: joined by LF, no LF after the body. */
    public static function canonicalBytes(string $timestamp, string $method, string $host, string $target, string $body): string
    {
        return implode("\n", ['v1', $timestamp, strtoupper($method), strtolower($host), $target, '']) . $body;
    }

    /**
     * Checks one request against one key. $target is the request target exactly as received ($_SERVER['REQUEST_URI']).
     * @param array<string, string|string[]> $headers any case; Host supplies the host unless $host is given
     */
    public static function verify(string $method, string $target, array $headers, string $rawBody, string $publicKeyPem, ?int $now = null, ?string $host = null): VerifyResult
    {
        $ts = self::header($headers, self::TIMESTAMP_HEADER);
        $sig = self::header($headers, self::SIGNATURE_HEADER);
        $hostHeader = $host ?? self::header($headers, 'Host');
        if ($ts === null || $ts === '' || $sig === null || $sig === '' || $hostHeader === null || $hostHeader === '') {
            return new VerifyResult(false, 'missing-header');
        }
        if (preg_match('/\A[0-9]{1,15}\z/', $ts) !== 1) {
            return new VerifyResult(false, 'bad-timestamp');
        }
        if (abs(($now ?? time()) - (int) $ts) > self::MAX_SKEW_SECONDS) {
            return new VerifyResult(false, 'stale-timestamp');
        }
        $raw = preg_match('/\A[A-Za-z0-9+\/]+={0,2}\z/', $sig) === 1 ? base64_decode($sig, true) : false;
        $key = openssl_pkey_get_public($publicKeyPem);
        if ($raw === false || $key === false) {
            return new VerifyResult(false, 'bad-signature');
        }
        $data = self::canonicalBytes($ts, $method, self::hostnameOf($hostHeader), $target, $rawBody);
        // openssl_verify: 1 valid, 0 invalid, -1/false error; only 1 passes.
        $valid = openssl_verify($data, $raw, $key, OPENSSL_ALGO_SHA256) === 1;
        return $valid ? new VerifyResult(true, null, (int) $ts) : new VerifyResult(false, 'bad-signature');
    }

    /** Verifies with the cached key; on a signature failure refetches the key once and tries again. */
    public function verifyRequest(string $method, string $target, array $headers, string $rawBody, ?int $now = null, ?string $host = null): VerifyResult
    {
        $fetched = false;
        if ($this->publicKeyPem === null) {
            $this->publicKeyPem = $this->fetchKey();
            $fetched = true;
            if ($this->publicKeyPem === null) {
                return new VerifyResult(false, 'key-unavailable');
            }
        }
        $result = self::verify($method, $target, $headers, $rawBody, $this->publicKeyPem, $now, $host);
        if ($result->reason !== 'bad-signature' || $fetched) {
            return $result;
        }
        $fresh = $this->fetchKey();
        if ($fresh === null) {
            return $result;
        }
        $this->publicKeyPem = $fresh;
        return self::verify($method, $target, $headers, $rawBody, $fresh, $now, $host);
    }

    /**
     * The default path for a receiver: verifyRequest, then the fields, refused unless address_in and coin are
     * what the merchant stored for the order (found by the merchant's own reference in its callback URL).
     */
    public function verifyPayment(string $method, string $target, array $headers, string $rawBody, string $addressIn, string $coin, ?int $now = null, ?string $host = null): PaymentResult
    {
        return self::paymentOf($this->verifyRequest($method, $target, $headers, $rawBody, $now, $host), $method, $target, $rawBody, $addressIn, $coin);
    }

    /** The one-shot check with one key: signature and timestamp, then the order's address_in and coin. */
    public static function verifyPaymentWithKey(string $method, string $target, array $headers, string $rawBody, string $publicKeyPem, string $addressIn, string $coin, ?int $now = null, ?string $host = null): PaymentResult
    {
        return self::paymentOf(self::verify($method, $target, $headers, $rawBody, $publicKeyPem, $now, $host), $method, $target, $rawBody, $addressIn, $coin);
    }

    /** Plain PHP: verifyPayment with method, target, Host and headers from $_SERVER, the body from php://input. */
    public function verifyPaymentGlobals(string $addressIn, string $coin, ?string $rawBody = null): PaymentResult
    {
        $body = $rawBody ?? (string) file_get_contents('php://input');
        $method = (string) ($_SERVER['REQUEST_METHOD'] ?? '');
        return self::paymentOf($this->verifyGlobals($body), $method, (string) ($_SERVER['REQUEST_URI'] ?? ''), $body, $addressIn, $coin);
    }

    /**
     * The callback's fields: the query of a GET, else a JSON body (it opens with "{"), else a form body.
     * Null when they cannot be read or a checked key is missing or repeated. Call it on verified requests only.
     * The query is split by hand: parse_str would keep the last of repeated keys and mangle dots in names.
     * @return array<string, mixed>|null
     */
    public static function callbackFields(string $method, string $target, string $rawBody): ?array
    {
        if (strtoupper($method) !== 'GET' && strncmp(ltrim($rawBody), '{', 1) === 0) {
            $fields = json_decode($rawBody, true);
            if (!is_array($fields) || !is_string($fields['address_in'] ?? null) || !is_string($fields['coin'] ?? null)) {
                return null;
            }
            return $fields;
        }
        $query = $rawBody;
        if (strtoupper($method) === 'GET') {
            $query = explode('#', $target, 2)[0];
            $query = strpos($query, '?') === false ? '' : substr($query, strpos($query, '?') + 1);
        }
        $fields = [];
        $seen = ['address_in' => 0, 'coin' => 0];
        foreach ($query === '' ? [] : explode('&', $query) as $pair) {
            if ($pair === '') {
                continue;
            }
            $kv = explode('=', $pair, 2);
            $key = urldecode($kv[0]);
            $fields[$key] = urldecode($kv[1] ?? '');
            if (isset($seen[$key])) {
                $seen[$key]++;
            }
        }
        return $seen['address_in'] === 1 && $seen['coin'] === 1 ? $fields : null;
    }

    /** Refuses fields whose address_in or coin is not the order's: null when they match. */
    public static function checkPayment(array $fields, string $addressIn, string $coin): ?string
    {
        if (($fields['address_in'] ?? null) !== $addressIn) {
            return 'wrong-address-in';
        }
        if (($fields['coin'] ?? null) !== $coin) {
            return 'wrong-coin';
        }
        return null;
    }

    private static function paymentOf(VerifyResult $result, string $method, string $target, string $rawBody, string $addressIn, string $coin): PaymentResult
    {
        if (!$result->ok) {
            return new PaymentResult(false, $result->reason);
        }
        $fields = self::callbackFields($method, $target, $rawBody);
        if ($fields === null) {
            return new PaymentResult(false, 'bad-fields');
        }
        $wrong = self::checkPayment($fields, $addressIn, $coin);
        return $wrong === null ? new PaymentResult(true, null, $result->timestamp, $fields) : new PaymentResult(false, $wrong);
    }

    /** The key in use (after a refetch, the fresh one): store it to skip the fetch in the next PHP request. */
    public function publicKeyPem(): ?string
    {
        return $this->publicKeyPem;
    }

    /** Plain PHP: method, target, Host and headers from $_SERVER, the body from php://input. */
    public function verifyGlobals(?string $rawBody = null): VerifyResult
    {
        $headers = [
            'Host' => $_SERVER['HTTP_HOST'] ?? '',
            self::TIMESTAMP_HEADER => $_SERVER['HTTP_X_GATEWAY_TIMESTAMP'] ?? '',
            self::SIGNATURE_HEADER => $_SERVER['HTTP_X_GATEWAY_SIGNATURE'] ?? '',
        ];
        $body = $rawBody ?? (string) file_get_contents('php://input');
        return $this->verifyRequest((string) ($_SERVER['REQUEST_METHOD'] ?? ''), (string) ($_SERVER['REQUEST_URI'] ?? ''), $headers, $body);
    }

    /** The PEM from the fetch callable or GET {gatewayUrl}/api/pubkey; null on any failure (never a bypass). */
    private function fetchKey(): ?string
    {
        try {
            if ($this->fetch !== null) {
                $pem = ($this->fetch)();
            } elseif ($this->gatewayUrl !== null) {
                $ctx = stream_context_create(['http' => ['method' => 'GET', 'timeout' => 10, 'ignore_errors' => true]]);
                $pem = @file_get_contents(rtrim($this->gatewayUrl, '/') . '/api/pubkey', false, $ctx);
                $status = isset($http_response_header[0]) ? (int) explode(' ', $http_response_header[0])[1] : 0;
                if ($status !== 200) {
                    return null;
                }
            } else {
                return null;
            }
        } catch (\Throwable $e) {
            return null;
        }
        return is_string($pem) && openssl_pkey_get_public($pem) !== false ? $pem : null;
    }

    /** @param array<string, string|string[]> $headers */
    private static function header(array $headers, string $name): ?string
    {
        foreach ($headers as $k => $v) {
            if (strcasecmp((string) $k, $name) === 0) {
                return is_array($v) ? (isset($v[0]) ? (string) $v[0] : null) : (string) $v;
            }
        }
        return null;
    }
}
