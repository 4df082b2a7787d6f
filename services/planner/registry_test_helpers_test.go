package planner

// testRegistry fills the defaults of a registry for tests: owner "me",
// managed A, AAAA, CNAME.
func testRegistry(r txtRegistry) *txtRegistry {
	if r.OwnerID == "" {
		r.OwnerID = "me"
	}
	if r.managed == nil {
		r.managed = []string{"A", "AAAA", "CNAME"}
	}
	return &r
}
