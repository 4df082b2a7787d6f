module github.com/zonestream/zonestream/cmd/zonestream

go 1.26.0
