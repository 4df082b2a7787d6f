package dnsprovider

// Status is the agreed shape of both kinds' status.
type Status struct {
	Conditions         []Condition `json:"conditions,omitempty"`
	Zones              []string    `json:"zones,omitempty"`
	LastError          string      `json:"lastError,omitempty"`
	Records            int         `json:"records"`
	Quota              int         `json:"quota,omitempty"`
	ObservedGeneration int64       `json:"observedGeneration,omitempty"`
}

// Condition is one of Status.Conditions: Ready and Conflict.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
}

// ready is the object's Ready condition, nil when it has none.
func (s *Status) ready() *Condition { return s.condition("Ready") }

// condition is the object's condition of type typ, nil when it has none.
func (s *Status) condition(typ string) *Condition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == typ {
			return &s.Conditions[i]
		}
	}
	return nil
}
