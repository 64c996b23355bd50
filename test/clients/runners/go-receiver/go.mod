module receiver

go 1.19

require gatewaycallback v0.0.0

replace gatewaycallback => ../../../../clients/go
