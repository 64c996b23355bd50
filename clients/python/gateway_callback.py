"""Verifies the gateway's signed merchant callbacks (SPEC 5). One file, one dependency: `cryptography`.

Rules kept here: read the raw body before parsing; reject a missing header, a non-numeric timestamp or
abs(now - timestamp) > 300 s; rebuild the six canonical components from what arrived (never decoded,
sorted or re-encoded); verify RSA-SHA256 (PKCS#1 v1.5) with the key from GET /api/pubkey; on a signature
failure refetch the key once (it may have been rotated); never bypass. Trust the fields only after `ok`.

A valid signature says the gateway sent the callback, not that it pays into your order: anyone can create a
configuration with your callback URL (or a spelling of it that arrives byte-identical) and their own payout,
and its callbacks are signed as well. `verify_payment` therefore also takes what you stored for the order
when you created it (address_in, coin) and refuses a callback that carries anything else.
"""

import base64
import json
import re
import threading
import time
import urllib.request
from typing import Callable, Mapping, NamedTuple, Optional, Union
from urllib.parse import parse_qsl, quote

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

MAX_SKEW_SECONDS = 300
TIMESTAMP_HEADER = "X-Gateway-Timestamp"
SIGNATURE_HEADER = "X-Gateway-Signature"

_TIMESTAMP = re.compile(r"\A[0-9]{1,15}\Z")
_BASE64 = re.compile(r"\A[A-Za-z0-9+/]+={0,2}\Z")


class VerifyResult(NamedTuple):
    ok: bool
    # None when ok; else missing-header, bad-timestamp, stale-timestamp, bad-signature or key-unavailable.
    reason: Optional[str] = None
    timestamp: Optional[int] = None


class PaymentResult(NamedTuple):
    ok: bool
    # None when ok; else a VerifyResult reason, bad-fields, wrong-address-in or wrong-coin.
    reason: Optional[str] = None
    timestamp: Optional[int] = None
    fields: Optional[dict] = None


# The keys checked against the order: each must arrive exactly once, or the callback is refused.
_ORDER_KEYS = ("address_in", "coin")


def callback_fields(method: str, target: str, raw_body: bytes) -> Optional[dict]:
    """The callback's fields: the query of a GET, else a JSON body (it opens with `{`), else a form body.
    None when they cannot be read or a checked key is missing or repeated. Call it on verified requests only."""
    try:
        body = (raw_body or b"").decode("utf-8")
    except UnicodeDecodeError:
        return None
    if method.upper() != "GET" and body.lstrip().startswith("{"):
        try:
            fields = json.loads(body)
        except ValueError:
            return None
        if not isinstance(fields, dict) or not all(isinstance(fields.get(k), str) for k in _ORDER_KEYS):
            return None
        return fields
    query = target.split("#", 1)[0].partition("?")[2] if method.upper() == "GET" else body
    pairs = parse_qsl(query, keep_blank_values=True)
    if any(sum(1 for k, _ in pairs if k == key) != 1 for key in _ORDER_KEYS):
        return None
    return dict(pairs)


def check_payment(fields: Mapping[str, object], address_in: str, coin: str) -> Optional[str]:
    """Refuses fields whose address_in or coin is not the order's: None when they match."""
    if fields.get("address_in") != address_in:
        return "wrong-address-in"
    if fields.get("coin") != coin:
        return "wrong-coin"
    return None


def _payment_of(result: VerifyResult, method: str, target: str, raw_body: bytes, address_in: str, coin: str) -> PaymentResult:
    if not result.ok:
        return PaymentResult(False, result.reason)
    fields = callback_fields(method, target, raw_body)
    if fields is None:
        return PaymentResult(False, "bad-fields")
    wrong = check_payment(fields, address_in, coin)
    if wrong is not None:
        return PaymentResult(False, wrong)
    return PaymentResult(True, None, result.timestamp, fields)


def verify_payment_callback(method: str, target: str, headers: Mapping[str, str], raw_body: bytes,
                            public_key: Union[str, bytes, rsa.RSAPublicKey], address_in: str, coin: str,
                            now: Optional[float] = None, host: Optional[str] = None) -> PaymentResult:
    """The one-shot check with one key: signature and timestamp, then the order's address_in and coin."""
    result = verify_callback(method, target, headers, raw_body, public_key, now, host)
    return _payment_of(result, method, target, raw_body, address_in, coin)


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    want = name.lower()
    for key, value in headers.items():
        if key.lower() == want:
            return value
    return None


def hostname_of(host_header: str) -> str:
    """Host header value -> lowercase hostname without port; an IPv6 literal keeps its brackets."""
    h = host_header.strip().lower()
    if h.startswith("["):
        end = h.find("]")
        return h[: end + 1] if end >= 0 else h
    return h.rsplit(":", 1)[0] if ":" in h else h


def canonical_bytes(timestamp: str, method: str, host: str, target: str, body: bytes) -> bytes:
    """v1, timestamp, METHOD, host, path_and_query, raw body: joined by LF, no LF after the body."""
    head = "\n".join(["v1", timestamp, method.upper(), host.lower(), target, ""])
    return head.encode("utf-8") + body


def load_public_key(pem: Union[str, bytes]) -> rsa.RSAPublicKey:
    key = serialization.load_pem_public_key(pem.encode() if isinstance(pem, str) else pem)
    if not isinstance(key, rsa.RSAPublicKey):
        raise ValueError("the gateway's callback key must be an RSA public key")
    return key


def verify_callback(
    method: str,
    target: str,
    headers: Mapping[str, str],
    raw_body: bytes,
    public_key: Union[str, bytes, rsa.RSAPublicKey],
    now: Optional[float] = None,
    host: Optional[str] = None,
) -> VerifyResult:
    """Checks one request against one key. `target` is the request target exactly as received."""
    ts = _header(headers, TIMESTAMP_HEADER)
    sig = _header(headers, SIGNATURE_HEADER)
    host_header = host if host is not None else _header(headers, "Host")
    if not ts or not sig or not host_header:
        return VerifyResult(False, "missing-header")
    if not _TIMESTAMP.match(ts):
        return VerifyResult(False, "bad-timestamp")
    current = int(time.time() if now is None else now)
    if abs(current - int(ts)) > MAX_SKEW_SECONDS:
        return VerifyResult(False, "stale-timestamp")
    if not _BASE64.match(sig):
        return VerifyResult(False, "bad-signature")
    key = public_key if isinstance(public_key, rsa.RSAPublicKey) else load_public_key(public_key)
    data = canonical_bytes(ts, method, hostname_of(host_header), target, raw_body or b"")
    try:
        key.verify(base64.b64decode(sig, validate=True), data, padding.PKCS1v15(), hashes.SHA256())
    except (InvalidSignature, ValueError):
        return VerifyResult(False, "bad-signature")
    return VerifyResult(True, None, int(ts))


def fetch_public_key(gateway_url: str, timeout: float = 10.0) -> str:
    """GET {gateway_url}/api/pubkey; anything but HTTP 200 with a PEM body is an error."""
    with urllib.request.urlopen(gateway_url.rstrip("/") + "/api/pubkey", timeout=timeout) as res:
        text = res.read().decode("utf-8")
    if "BEGIN PUBLIC KEY" not in text:
        raise ValueError("GET /api/pubkey returned no public key")
    return text


class CallbackVerifier:
    """Keeps the gateway's key and refetches it once when a signature fails (rotation). Thread-safe."""

    def __init__(
        self,
        gateway_url: Optional[str] = None,
        public_key_pem: Optional[str] = None,
        fetch: Optional[Callable[[], str]] = None,
    ):
        if fetch is None and gateway_url is not None:
            fetch = lambda: fetch_public_key(gateway_url)  # noqa: E731
        if fetch is None and public_key_pem is None:
            raise ValueError("give gateway_url, fetch or public_key_pem")
        self._fetch = fetch
        self._key = load_public_key(public_key_pem) if public_key_pem else None
        self._lock = threading.Lock()

    def _refetch(self) -> Optional[rsa.RSAPublicKey]:
        """Fetches the key now; on a network or PEM error keeps none new (no key means no acceptance)."""
        if self._fetch is None:
            return None
        try:
            key = load_public_key(self._fetch())
        except Exception:
            return None
        with self._lock:
            self._key = key
        return key

    def verify(self, method: str, target: str, headers: Mapping[str, str], raw_body: bytes,
               now: Optional[float] = None, host: Optional[str] = None) -> VerifyResult:
        with self._lock:
            key = self._key
        fetched = False
        if key is None:
            key, fetched = self._refetch(), True
            if key is None:
                return VerifyResult(False, "key-unavailable")
        result = verify_callback(method, target, headers, raw_body, key, now, host)
        # Only a signature failure can mean a rotated key; one refetch, then the verdict stands.
        if result.reason != "bad-signature" or fetched:
            return result
        fresh = self._refetch()
        if fresh is None:
            return result
        return verify_callback(method, target, headers, raw_body, fresh, now, host)

    def verify_wsgi(self, environ: Mapping[str, object], raw_body: bytes, now: Optional[float] = None) -> VerifyResult:
        """Flask, Django or any WSGI app: method, target, Host and the X-Gateway-* headers from the environ."""
        headers = {
            "Host": str(environ.get("HTTP_HOST", "")),
            TIMESTAMP_HEADER: str(environ.get("HTTP_X_GATEWAY_TIMESTAMP", "")),
            SIGNATURE_HEADER: str(environ.get("HTTP_X_GATEWAY_SIGNATURE", "")),
        }
        return self.verify(str(environ.get("REQUEST_METHOD", "")), wsgi_target(environ), headers, raw_body, now)

    def verify_payment(self, method: str, target: str, headers: Mapping[str, str], raw_body: bytes,
                       address_in: str, coin: str, now: Optional[float] = None, host: Optional[str] = None) -> PaymentResult:
        """The default path for a receiver: `verify`, then the fields, refused unless address_in and coin are
        what the merchant stored for the order (found by the merchant's own reference in its callback URL)."""
        result = self.verify(method, target, headers, raw_body, now, host)
        return _payment_of(result, method, target, raw_body, address_in, coin)

    def verify_payment_wsgi(self, environ: Mapping[str, object], raw_body: bytes, address_in: str, coin: str,
                            now: Optional[float] = None) -> PaymentResult:
        """`verify_payment` with method, target and headers from a WSGI environ (Flask, Django)."""
        method, target = str(environ.get("REQUEST_METHOD", "")), wsgi_target(environ)
        return _payment_of(self.verify_wsgi(environ, raw_body, now), method, target, raw_body, address_in, coin)


def wsgi_target(environ: Mapping[str, object]) -> str:
    """The request target as transmitted. WSGI's PATH_INFO is percent-decoded, so prefer the raw line
    (RAW_URI: gunicorn, Werkzeug; REQUEST_URI: uWSGI, Werkzeug); the fallback re-encodes the path."""
    for name in ("RAW_URI", "REQUEST_URI"):
        raw = environ.get(name)
        if isinstance(raw, str) and raw.startswith("/"):
            return raw
    # PEP 3333 carries the path as latin-1 text of the decoded bytes.
    path_bytes = (str(environ.get("SCRIPT_NAME", "")) + str(environ.get("PATH_INFO", ""))).encode("latin-1")
    path = quote(path_bytes, safe="/;=,:@!$&'()*+~")
    query = str(environ.get("QUERY_STRING", ""))
    return path + ("?" + query if query else "")
