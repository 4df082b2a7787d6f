package istio

func errs(err error) []error {
	if err == nil {
		return nil
	}
	return []error{err}
}
