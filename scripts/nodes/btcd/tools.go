//go:build tools

// Package tools pins the node this module builds: go.mod requires it, go.sum pins every module's hash.
package tools

import _ "github.com/btcsuite/btcd"
