// Package gatewaycallback verifies the gateway's signed merchant callbacks (SPEC 5), with the standard
// library only.
//
// Rules kept here: read the raw body before parsing; reject a missing header, a non-numeric timestamp or
// abs(now - timestamp) > 300 s; rebuild the six canonical components from what arrived (never decoded,
// sorted or re-encoded); verify RSA-SHA256 (PKCS#1 v1.5) with the key from GET /api/pubkey; on a
// signature failure refetch the key once (it may have been rotated); never bypass. Trust the fields only
// after Verify returns nil.
//
// A valid signature says the gateway sent the callback, not that it pays into your order: anyone can create
// a configuration with your callback URL (or a spelling of it that arrives byte-identical) and their own
// payout, and its callbacks are signed as well. VerifyPayment therefore also takes what you stored for the
// order when you created it (address_in, coin) and refuses a callback that carries anything else.
package gatewaycallback

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const (
	MaxSkewSeconds  = 300
	TimestampHeader = "X-Gateway-Timestamp"
	SignatureHeader = "X-Gateway-Signature"
)

// The reasons a callback is refused; compare with errors.Is.
var (
	ErrMissingHeader  = errors.New("missing-header")
	ErrBadTimestamp   = errors.New("bad-timestamp")
	ErrStaleTimestamp = errors.New("stale-timestamp")
	ErrBadSignature   = errors.New("bad-signature")
	ErrKeyUnavailable = errors.New("key-unavailable")
	ErrBadFields      = errors.New("bad-fields")
	ErrWrongAddressIn = errors.New("wrong-address-in")
	ErrWrongCoin      = errors.New("wrong-coin")
)

// Expected is what the merchant stored for the order from the create response, exactly as it was given.
type Expected struct {
	AddressIn string
	Coin      string
}

// orderKeys are checked against the order: each must arrive exactly once, or the callback is refused.
var orderKeys = []string{"address_in", "coin"}

var (
	timestampRe = regexp.MustCompile(`^[0-9]{1,15}$`)
	base64Re    = regexp.MustCompile(`^[A-Za-z0-9+/]+={0,2}$`)
)

// Request is what arrived, before any parsing. Target is the request target exactly as received
// (net/http: r.RequestURI), Host the Host header value (r.Host).
type Request struct {
	Method    string
	Target    string
	Host      string
	Timestamp string
	Signature string
	Body      []byte
}

// HostnameOf turns a Host header value into the lowercase hostname without port; IPv6 keeps its brackets.
func HostnameOf(hostHeader string) string {
	h := strings.ToLower(strings.TrimSpace(hostHeader))
	if strings.HasPrefix(h, "[") {
		if i := strings.Index(h, "]"); i >= 0 {
			return h[:i+1]
		}
		return h
	}
	if i := strings.LastIndex(h, ":"); i >= 0 {
		return h[:i]
	}
	return h
}

// CanonicalBytes joins v1, timestamp, METHOD, host, path_and_query and the raw body by LF, with no LF after the body.
func CanonicalBytes(timestamp, method, host, target string, body []byte) []byte {
	var b bytes.Buffer
	b.WriteString(strings.Join([]string{"v1", timestamp, strings.ToUpper(method), strings.ToLower(host), target, ""}, "\n"))
	b.Write(body)
	return b.Bytes()
}

// ParsePublicKeyPEM reads the PEM that GET /api/pubkey serves (SPKI "PUBLIC KEY"; PKCS#1 "RSA PUBLIC KEY" too).
func ParsePublicKeyPEM(data []byte) (*rsa.PublicKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block in the public key")
	}
	if block.Type == "RSA PUBLIC KEY" {
		return x509.ParsePKCS1PublicKey(block.Bytes)
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	rsaKey, ok := key.(*rsa.PublicKey)
	if !ok {
		return nil, errors.New("the gateway's callback key must be an RSA public key")
	}
	return rsaKey, nil
}

// Verify checks one request against one key at time now. The error is nil only for a genuine, fresh
// callback; the timestamp it returns is then the signed one.
func Verify(req Request, key *rsa.PublicKey, now time.Time) (int64, error) {
	if req.Timestamp == "" || req.Signature == "" || req.Host == "" {
		return 0, ErrMissingHeader
	}
	if !timestampRe.MatchString(req.Timestamp) {
		return 0, ErrBadTimestamp
	}
	ts, err := strconv.ParseInt(req.Timestamp, 10, 64)
	if err != nil {
		return 0, ErrBadTimestamp
	}
	skew := now.Unix() - ts
	if skew > MaxSkewSeconds || skew < -MaxSkewSeconds {
		return 0, ErrStaleTimestamp
	}
	if key == nil || !base64Re.MatchString(req.Signature) {
		return 0, ErrBadSignature
	}
	sig, err := base64.StdEncoding.DecodeString(req.Signature)
	if err != nil {
		return 0, ErrBadSignature
	}
	digest := sha256.Sum256(CanonicalBytes(req.Timestamp, req.Method, HostnameOf(req.Host), req.Target, req.Body))
	if rsa.VerifyPKCS1v15(key, crypto.SHA256, digest[:], sig) != nil {
		return 0, ErrBadSignature
	}
	return ts, nil
}

// Fields reads the callback's fields: the query of a GET, else a JSON body (it opens with "{"), else a form
// body. JSON keeps its types; the query and form give strings. ErrBadFields when they cannot be read or a
// checked key is missing or repeated. Call it on verified requests only.
func Fields(req Request) (map[string]any, error) {
	get := strings.EqualFold(req.Method, "GET")
	if !get && strings.HasPrefix(strings.TrimLeft(string(req.Body), " \t\r\n"), "{") {
		fields := map[string]any{}
		if err := json.Unmarshal(req.Body, &fields); err != nil {
			return nil, ErrBadFields
		}
		for _, k := range orderKeys {
			if _, ok := fields[k].(string); !ok {
				return nil, ErrBadFields
			}
		}
		return fields, nil
	}
	query := string(req.Body)
	if get {
		query = strings.SplitN(req.Target, "#", 2)[0]
		if i := strings.Index(query, "?"); i >= 0 {
			query = query[i+1:]
		} else {
			query = ""
		}
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return nil, ErrBadFields
	}
	for _, k := range orderKeys {
		if len(values[k]) != 1 {
			return nil, ErrBadFields
		}
	}
	fields := map[string]any{}
	for k, v := range values {
		fields[k] = v[len(v)-1]
	}
	return fields, nil
}

// CheckPayment refuses fields whose address_in or coin is not the order's.
func CheckPayment(fields map[string]any, want Expected) error {
	if got, _ := fields["address_in"].(string); got != want.AddressIn {
		return ErrWrongAddressIn
	}
	if got, _ := fields["coin"].(string); got != want.Coin {
		return ErrWrongCoin
	}
	return nil
}

// VerifyPayment is the one-shot check with one key: Verify, then the order's address_in and coin.
func VerifyPayment(req Request, key *rsa.PublicKey, want Expected, now time.Time) (map[string]any, error) {
	if _, err := Verify(req, key, now); err != nil {
		return nil, err
	}
	return paymentFields(req, want)
}

func paymentFields(req Request, want Expected) (map[string]any, error) {
	fields, err := Fields(req)
	if err != nil {
		return nil, err
	}
	if err := CheckPayment(fields, want); err != nil {
		return nil, err
	}
	return fields, nil
}
