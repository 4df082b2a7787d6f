module github.com/zonestream/zonestream/services/collector

go 1.26.0
