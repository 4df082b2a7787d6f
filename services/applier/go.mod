module github.com/zonestream/zonestream/services/applier

go 1.26.0
