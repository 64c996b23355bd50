// Runs clients/go over the fixture cases written by test/clients: argv[1] = cases.json. Each case goes
// through a net/http request value, as a handler would see it.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"gatewaycallback"
)

type fixture struct {
	Name    string            `json:"name"`
	Method  string            `json:"method"`
	Target  string            `json:"target"`
	Headers map[string]string `json:"headers"`
	BodyB64 string            `json:"body_b64"`
	Now     int64             `json:"now"`
	KeyFile *string           `json:"key_file"`
	Gateway *string           `json:"gateway"`
	Want    struct {
		AddressIn string `json:"address_in"`
		Coin      string `json:"coin"`
	} `json:"expected"`
}

type outcome struct {
	Name   string  `json:"name"`
	OK     bool    `json:"ok"`
	Reason *string `json:"reason"`
}

func main() {
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	var cases []fixture
	if err := json.Unmarshal(data, &cases); err != nil {
		panic(err)
	}
	out := []outcome{}
	for _, c := range cases {
		body, err := base64.StdEncoding.DecodeString(c.BodyB64)
		if err != nil {
			panic(err)
		}
		r := &http.Request{Method: c.Method, RequestURI: c.Target, Header: http.Header{}}
		for k, v := range c.Headers {
			if http.CanonicalHeaderKey(k) == "Host" {
				r.Host = v
			} else {
				r.Header.Set(k, v)
			}
		}
		var pemData []byte
		if c.KeyFile != nil {
			if pemData, err = os.ReadFile(*c.KeyFile); err != nil {
				panic(err)
			}
		}
		now := time.Unix(c.Now, 0)
		req := gatewaycallback.RequestFrom(r, body)
		want := gatewaycallback.Expected{AddressIn: c.Want.AddressIn, Coin: c.Want.Coin}
		if c.Gateway != nil {
			v, err := gatewaycallback.NewVerifier(*c.Gateway, pemData)
			if err != nil {
				panic(err)
			}
			_, err = v.VerifyPayment(context.Background(), req, want, now)
			out = append(out, result(c.Name, err))
		} else {
			key, err := gatewaycallback.ParsePublicKeyPEM(pemData)
			if err != nil {
				panic(err)
			}
			_, err = gatewaycallback.VerifyPayment(req, key, want, now)
			out = append(out, result(c.Name, err))
		}
	}
	enc, _ := json.Marshal(out)
	fmt.Println(string(enc))
}

func result(name string, err error) outcome {
	if err == nil {
		return outcome{Name: name, OK: true}
	}
	reason := err.Error()
	return outcome{Name: name, OK: false, Reason: &reason}
}
