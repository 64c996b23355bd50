package gatewaycallback

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Verifier keeps the gateway's key and refetches it once when a signature fails (key rotation).
// Safe for concurrent use.
type Verifier struct {
	// GatewayURL is the gateway's base URL, e.g. https://pay.example.com; the key is GET {GatewayURL}/api/pubkey.
	GatewayURL string
	// Client fetches the key; nil means a client with a 10 s timeout.
	Client *http.Client
	// Fetch replaces the HTTP fetch when set (e.g. a key from your own cache); it returns the PEM.
	Fetch func(ctx context.Context) ([]byte, error)

	mu  sync.Mutex
	key *rsa.PublicKey
}

// NewVerifier starts with a known key (may be nil) and fetches from gatewayURL when needed.
func NewVerifier(gatewayURL string, publicKeyPEM []byte) (*Verifier, error) {
	v := &Verifier{GatewayURL: gatewayURL}
	if len(publicKeyPEM) > 0 {
		key, err := ParsePublicKeyPEM(publicKeyPEM)
		if err != nil {
			return nil, err
		}
		v.key = key
	}
	return v, nil
}

func (v *Verifier) fetchPEM(ctx context.Context) ([]byte, error) {
	if v.Fetch != nil {
		return v.Fetch(ctx)
	}
	if v.GatewayURL == "" {
		return nil, errors.New("no GatewayURL to fetch the key from")
	}
	client := v.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(v.GatewayURL, "/")+"/api/pubkey", nil)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /api/pubkey answered %d", res.StatusCode)
	}
	return body, nil
}

func (v *Verifier) refetch(ctx context.Context) *rsa.PublicKey {
	data, err := v.fetchPEM(ctx)
	if err != nil {
		return nil
	}
	key, err := ParsePublicKeyPEM(data)
	if err != nil {
		return nil
	}
	v.mu.Lock()
	v.key = key
	v.mu.Unlock()
	return key
}

// Verify checks req with the cached key; on ErrBadSignature it refetches the key once and checks again.
func (v *Verifier) Verify(ctx context.Context, req Request, now time.Time) (int64, error) {
	v.mu.Lock()
	key := v.key
	v.mu.Unlock()
	fetched := false
	if key == nil {
		if key = v.refetch(ctx); key == nil {
			return 0, ErrKeyUnavailable
		}
		fetched = true
	}
	ts, err := Verify(req, key, now)
	// Only a signature failure can mean a rotated key; one refetch, then the verdict stands.
	if !errors.Is(err, ErrBadSignature) || fetched {
		return ts, err
	}
	fresh := v.refetch(ctx)
	if fresh == nil {
		return ts, err
	}
	return Verify(req, fresh, now)
}

// VerifyPayment is the default path for a receiver: Verify, then the fields, refused unless address_in and
// coin are what the merchant stored for the order (found by the merchant's own reference in its callback URL).
func (v *Verifier) VerifyPayment(ctx context.Context, req Request, want Expected, now time.Time) (map[string]any, error) {
	if _, err := v.Verify(ctx, req, now); err != nil {
		return nil, err
	}
	return paymentFields(req, want)
}

// RequestFrom builds a Request from a net/http request and its raw body (read before any parsing).
func RequestFrom(r *http.Request, body []byte) Request {
	return Request{
		Method:    r.Method,
		Target:    r.RequestURI,
		Host:      r.Host,
		Timestamp: r.Header.Get(TimestampHeader),
		Signature: r.Header.Get(SignatureHeader),
		Body:      body,
	}
}

func readBody(r *http.Request, maxBody int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > maxBody {
		return nil, errors.New("callback body too large")
	}
	return body, nil
}

// VerifyHTTP reads at most maxBody bytes of r's body, verifies the callback and returns the raw body to parse.
func (v *Verifier) VerifyHTTP(r *http.Request, maxBody int64) ([]byte, error) {
	body, err := readBody(r, maxBody)
	if err != nil {
		return nil, err
	}
	if _, err := v.Verify(r.Context(), RequestFrom(r, body), time.Now()); err != nil {
		return nil, err
	}
	return body, nil
}

// VerifyPaymentHTTP reads at most maxBody bytes of r's body and returns the callback's fields once the
// signature verifies and address_in and coin are the order's (want).
func (v *Verifier) VerifyPaymentHTTP(r *http.Request, maxBody int64, want Expected) (map[string]any, error) {
	body, err := readBody(r, maxBody)
	if err != nil {
		return nil, err
	}
	return v.VerifyPayment(r.Context(), RequestFrom(r, body), want, time.Now())
}
