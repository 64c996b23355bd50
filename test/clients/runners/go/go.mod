module fixturerunner

go 1.21

require gatewaycallback v0.0.0

replace gatewaycallback => ../../../../clients/go
