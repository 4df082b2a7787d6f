package source

import "strconv"

// InverseBool is a boolean flag stored inverted in *B: for an ExternalDNS
// flag whose default is true (--exclude-unschedulable) bound to a field
// whose zero value gives that default (IncludeUnschedulable), so that a
// Config built in code behaves like one parsed from an empty command line.
type InverseBool struct{ B *bool }

func (f InverseBool) String() string {
	if f.B == nil {
		return "true"
	}
	return strconv.FormatBool(!*f.B)
}

// Set implements flag.Value.
func (f InverseBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*f.B = !v
	return nil
}

// IsBoolFlag lets the flag be given without a value.
func (InverseBool) IsBoolFlag() bool { return true }
