// The net/http snippet of clients/go/README.md as a receiver: argv[1] = gateway URL, argv[2] = the shop's
// orders as JSON (reference -> address_in and coin from their create responses). Prints the port, then
// serves until killed.
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"

	"gatewaycallback"
)

type order struct {
	AddressIn string `json:"address_in"`
	Coin      string `json:"coin"`
}

func main() {
	verifier, err := gatewaycallback.NewVerifier(os.Args[1], nil)
	if err != nil {
		panic(err)
	}
	orders := map[string]order{}
	if err := json.Unmarshal([]byte(os.Args[2]), &orders); err != nil {
		panic(err)
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		reference := r.URL.Query().Get("order")
		o, known := orders[reference]
		if !known {
			http.Error(w, "unknown order", http.StatusNotFound)
			return
		}
		fields, err := verifier.VerifyPaymentHTTP(r, 64<<10, gatewaycallback.Expected{AddressIn: o.AddressIn, Coin: o.Coin})
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "ok %v %v %v %v %v", fields["uuid"], fields["result"], fields["pending"], fields["coin"], reference)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	panic(http.Serve(ln, nil))
}
