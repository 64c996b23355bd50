module gatewaycallback

go 1.21
