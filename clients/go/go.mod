module gatewaycallback

go 1.19
