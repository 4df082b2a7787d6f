package planner

// testRegistry fills the defaults of a registry for tests: owner "me",
// managed A, AAAA, CNAME.
func testRegistry(r registry) *registry {
	if r.ownerID == "" {
		r.ownerID = "me"
	}
	if r.managed == nil {
		r.managed = []string{"A", "AAAA", "CNAME"}
	}
	return &r
}
