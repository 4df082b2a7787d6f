module github.com/zonestream/zonestream/services/planner

go 1.26.0
