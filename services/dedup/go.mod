module github.com/zonestream/zonestream/services/dedup

go 1.26.0
