// The net/http snippet of clients/go/README.md as a receiver: argv[1] = gateway URL. Prints the port, then
// serves until killed.
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"gatewaycallback"
)

func main() {
	verifier, err := gatewaycallback.NewVerifier(os.Args[1], nil)
	if err != nil {
		panic(err)
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, err := verifier.VerifyHTTP(r, 64<<10)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		fields := map[string]any{}
		switch {
		case r.Method == http.MethodGet:
			for k, v := range r.URL.Query() {
				fields[k] = v[0]
			}
		case strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"):
			if err := json.Unmarshal(body, &fields); err != nil {
				http.Error(w, "bad json", http.StatusBadRequest)
				return
			}
		default:
			values, _ := url.ParseQuery(string(body))
			for k, v := range values {
				fields[k] = v[0]
			}
		}
		order := r.URL.Query().Get("order")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "ok %v %v %v %v %v", fields["uuid"], fields["result"], fields["pending"], fields["coin"], order)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	panic(http.Serve(ln, nil))
}
