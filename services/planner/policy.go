package planner

// Policy says which changes the planner may make (--policy).
type Policy string

const (
	PolicySync       Policy = "sync"        // create, update and delete
	PolicyUpsertOnly Policy = "upsert-only" // create and update, never delete
	PolicyCreateOnly Policy = "create-only" // create only
)

func (p Policy) valid() bool {
	return p == PolicySync || p == PolicyUpsertOnly || p == PolicyCreateOnly
}

func (p Policy) allows(action string) bool {
	switch action {
	case "create":
		return true
	case "update":
		return p != PolicyCreateOnly
	}
	return p == PolicySync
}

// effectivePolicy is the configured policy, without deletes until the
// desired stream is complete.
func (r *run) effectivePolicy() Policy {
	if !r.complete && r.policy == PolicySync {
		return PolicyUpsertOnly
	}
	return r.policy
}
